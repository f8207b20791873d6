// GET /ui/ and its files (docs/events.md, "The web page"): served from the binary, with a
// content type, an ETag the browser revalidates with (304 when unchanged), and a strict
// Content-Security-Policy: the page runs only its own scripts and styles, talks only to this
// server, and cannot be framed.
#include "server/http/routes.h"
#include "server/http/ui_assets.h"

namespace holdfast::http {
namespace {

constexpr std::string_view kUiPrefix = "/ui/";

void security_headers(Response& res) {
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; script-src 'self'; style-src 'self'; "
                           "connect-src 'self'; img-src 'self'; base-uri 'none'; "
                           "form-action 'none'; frame-ancestors 'none'");
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("Referrer-Policy", "no-referrer");
}

// Whether an If-None-Match header names `etag` (a list, or *).
bool matches(std::string_view if_none_match, std::string_view etag) {
  if (if_none_match.empty()) return false;
  if (if_none_match == "*") return true;
  std::size_t at = 0;
  while (at < if_none_match.size()) {
    std::size_t end = if_none_match.find(',', at);
    if (end == std::string_view::npos) end = if_none_match.size();
    std::string_view tag = if_none_match.substr(at, end - at);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == etag) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

void serve_ui(const ServerView&, const Request& req, Response& res) {
  std::string_view name = req.path.substr(kUiPrefix.size());
  if (name.empty()) name = "index.html";
  for (const UiAsset& a : ui_assets()) {
    if (a.path != name) continue;
    res.headers.emplace_back("ETag", std::string(a.etag));
    res.headers.emplace_back("Cache-Control", "no-cache");
    security_headers(res);
    if (matches(req.if_none_match, a.etag)) {
      res.status = 304;
      res.content_type.clear();
      res.body.clear();
      return;
    }
    res.status = 200;
    res.content_type = std::string(a.content_type);
    res.body = std::string(a.body);
    return;
  }
  error_response(Error(ErrorCode::kNotFound, "no file " + std::string(req.path)), res);
}

void redirect_to_ui(const ServerView&, const Request&, Response& res) {
  res.status = 308;
  res.content_type.clear();
  res.headers.emplace_back("Location", std::string(kUiPrefix));
}

}  // namespace holdfast::http
