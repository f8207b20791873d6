#include "server/http/cors.h"

#include <algorithm>
#include <cctype>

namespace holdfast::http::cors {
namespace {

constexpr std::string_view kMethodList[] = {"GET", "HEAD", "POST", "PUT", "DELETE"};
constexpr std::string_view kMethods = "GET, HEAD, POST, PUT, DELETE";
constexpr std::string_view kHeaders = "Authorization, Content-Type";
// Browsers keep a preflight's answer this long (Chromium caps it at 2 hours).
constexpr std::string_view kMaxAgeSeconds = "600";

bool any_origin(const Policy& policy) {
  return std::find(policy.allowed_origins.begin(), policy.allowed_origins.end(), "*") !=
         policy.allowed_origins.end();
}

bool allowed(const Policy& policy, std::string_view origin) {
  if (origin.empty()) return false;
  if (any_origin(policy)) return true;
  return std::find(policy.allowed_origins.begin(), policy.allowed_origins.end(), origin) !=
         policy.allowed_origins.end();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The first requested header the API does not take, if any.
std::optional<std::string> unwanted_header(std::string_view requested) {
  while (!requested.empty()) {
    const std::size_t comma = requested.find(',');
    const std::string name = lower(trim(requested.substr(0, comma)));
    if (!name.empty() && name != "authorization" && name != "content-type") return name;
    if (comma == std::string_view::npos) break;
    requested.remove_prefix(comma + 1);
  }
  return std::nullopt;
}

Response refusal(std::string message) {
  Response r;
  error_response(Error(ErrorCode::kForbidden, std::move(message)), r);
  return r;
}

}  // namespace

Headers response_headers(const Policy& policy, std::string_view origin) {
  Headers out;
  if (!policy.enabled()) return out;
  const bool any = any_origin(policy);
  // Whether the answer names the origin depends on the Origin header: caches must know.
  if (!any) out.emplace_back("Vary", "Origin");
  if (!allowed(policy, origin)) return out;
  out.emplace_back("Access-Control-Allow-Origin", any ? std::string("*") : std::string(origin));
  out.emplace_back("Access-Control-Expose-Headers", "Retry-After, WWW-Authenticate");
  return out;
}

std::optional<Response> preflight(const Policy& policy, std::string_view method,
                                  std::string_view origin, std::string_view request_method,
                                  std::string_view request_headers) {
  if (!policy.enabled() || method != "OPTIONS" || origin.empty() || request_method.empty())
    return std::nullopt;
  if (!allowed(policy, origin))
    return refusal("origin " + std::string(origin) + " is not in [server] corsAllowedOrigins");
  if (std::find(std::begin(kMethodList), std::end(kMethodList), request_method) ==
      std::end(kMethodList))
    return refusal("method " + std::string(request_method) + " is not one the API takes (" +
                   std::string(kMethods) + ")");
  if (auto name = unwanted_header(request_headers))
    return refusal("request header " + *name + " is not one the API takes (" +
                   std::string(kHeaders) + ")");
  Response r;
  r.status = 204;
  r.content_type.clear();
  r.headers = {{"Access-Control-Allow-Methods", std::string(kMethods)},
               {"Access-Control-Allow-Headers", std::string(kHeaders)},
               {"Access-Control-Max-Age", std::string(kMaxAgeSeconds)}};
  return r;
}

std::optional<Response> cross_origin_refusal(const Policy& policy, std::string_view method,
                                             std::string_view origin) {
  if (origin.empty() || method == "GET" || method == "HEAD" || method == "OPTIONS")
    return std::nullopt;
  if (allowed(policy, origin)) return std::nullopt;
  return refusal("a web page from origin " + std::string(origin) +
                 " may not change locks: the origin is not in [server] corsAllowedOrigins");
}

std::optional<std::string> origin_problem(std::string_view entry) {
  if (entry == "*") return std::nullopt;
  std::string_view rest;
  if (entry.substr(0, 7) == "http://") {
    rest = entry.substr(7);
  } else if (entry.substr(0, 8) == "https://") {
    rest = entry.substr(8);
  } else {
    return "\"" + std::string(entry) +
           "\" is not \"*\" or an origin such as \"https://app.example.com\"";
  }
  if (rest.empty() || rest.front() == ':') return "\"" + std::string(entry) + "\" has no host";
  if (rest.find_first_of("/?#@ ") != std::string_view::npos)
    return "\"" + std::string(entry) +
           "\" is an origin only: scheme, host and port, without a path or a trailing slash";
  if (lower(entry) != entry)
    return "\"" + std::string(entry) + "\" must be in lower case, as browsers send it";
  return std::nullopt;
}

}  // namespace holdfast::http::cors
