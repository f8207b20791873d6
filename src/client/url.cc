// Parsing of server URLs (see url.h for the accepted forms).
#include "client/url.h"

#include <charconv>

#include "holdfast/errors.h"

namespace holdfast::inline v0::client_internal {
namespace {

[[noreturn]] void bad_url(std::string_view what) {
  throw InvalidArgumentError("INVALID_ARGUMENT", "bad server URL: " + std::string(what));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) bad_url("a '%' in the credentials is not followed by two hex digits");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// "user:token" or ":token" or "user" (userinfo without the '@').
void parse_userinfo(std::string_view info, ServerAddress* a) {
  auto colon = info.find(':');
  a->user = percent_decode(info.substr(0, colon));
  if (colon != std::string_view::npos) a->token = percent_decode(info.substr(colon + 1));
}

// host[:port] or [v6][:port]
void parse_host_port(std::string_view hp, ServerAddress* a) {
  std::string_view port_text;
  if (!hp.empty() && hp.front() == '[') {
    auto close = hp.find(']');
    if (close == std::string_view::npos) bad_url("unclosed '[' in an IPv6 address");
    a->host = std::string(hp.substr(1, close - 1));
    auto rest = hp.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') bad_url("expected ':port' after the IPv6 address");
      port_text = rest.substr(1);
      if (port_text.empty()) bad_url("empty port");
    }
  } else {
    auto colon = hp.rfind(':');
    if (colon != std::string_view::npos && hp.find(':') != colon)
      bad_url("an IPv6 address must be in [brackets]");
    a->host = std::string(hp.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = hp.substr(colon + 1);
      if (port_text.empty()) bad_url("empty port");
    }
  }
  if (a->host.empty()) bad_url("no host");
  if (!port_text.empty()) {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
      bad_url("port '" + std::string(port_text) + "' is not a number from 1 to 65535");
    a->port = port;
  }
}

ServerAddress parse_unix(std::string_view rest) {
  ServerAddress a;
  a.kind = ServerAddress::Kind::kUnix;
  if (!rest.empty() && rest.front() != '/') {
    auto at = rest.find('@');
    if (at == std::string_view::npos)
      bad_url("unix:// needs an absolute path, e.g. unix:///run/holdfast.sock");
    parse_userinfo(rest.substr(0, at), &a);
    rest = rest.substr(at + 1);
  }
  if (rest.empty() || rest.front() != '/')
    bad_url("unix:// needs an absolute path, e.g. unix:///run/holdfast.sock");
  a.path = std::string(rest);
  return a;
}

ServerAddress parse_tcp(std::string_view authority) {
  ServerAddress a;
  // A trailing "/" (holdfast://host:port/) carries nothing.
  if (auto slash = authority.find('/'); slash != std::string_view::npos) {
    if (slash + 1 != authority.size()) bad_url("a server URL has no path");
    authority = authority.substr(0, slash);
  }
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    parse_userinfo(authority.substr(0, at), &a);
    authority = authority.substr(at + 1);
  }
  if (authority.find(',') != std::string_view::npos)
    bad_url("a list of nodes where one server is expected");
  parse_host_port(authority, &a);
  return a;
}

}  // namespace

std::string ServerAddress::display() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::vector<ServerAddress> parse_server_urls(std::string_view url) {
  constexpr std::string_view kHoldfast = "holdfast://";
  constexpr std::string_view kRediss = "rediss://";
  const bool tls = url.starts_with(kRediss);
  std::string_view authority = url.starts_with(kHoldfast) ? url.substr(kHoldfast.size())
                               : tls                      ? url.substr(kRediss.size())
                                                          : url;
  const bool tcp = url.starts_with(kHoldfast) || tls || url.find("://") == std::string_view::npos;
  if (!tcp || authority.find(',') == std::string_view::npos ||
      (!authority.empty() && authority.front() == '/'))
    return {parse_server_url(url)};
  // holdfast://[userinfo@]node,node,...[/]: the credentials come once, before the list.
  if (auto slash = authority.find('/'); slash != std::string_view::npos) {
    if (slash + 1 != authority.size()) bad_url("a server URL has no path");
    authority = authority.substr(0, slash);
  }
  ServerAddress shared;
  shared.tls = tls;
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    parse_userinfo(authority.substr(0, at), &shared);
    authority = authority.substr(at + 1);
  }
  std::vector<ServerAddress> out;
  for (std::size_t start = 0;;) {
    const auto comma = authority.find(',', start);
    const std::string_view node = authority.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (node.empty()) bad_url("empty entry in the node list");
    ServerAddress a = shared;
    parse_host_port(node, &a);
    out.push_back(std::move(a));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

ServerAddress parse_server_url(std::string_view url) {
  if (url.empty()) bad_url("empty");
  constexpr std::string_view kHoldfast = "holdfast://";
  constexpr std::string_view kUnix = "unix://";
  constexpr std::string_view kRediss = "rediss://";
  if (url.starts_with(kHoldfast)) return parse_tcp(url.substr(kHoldfast.size()));
  if (url.starts_with(kRediss)) {
    ServerAddress a = parse_tcp(url.substr(kRediss.size()));
    a.tls = true;
    return a;
  }
  if (url.starts_with(kUnix)) return parse_unix(url.substr(kUnix.size()));
  if (url.front() == '/') return parse_unix(url);
  if (auto scheme = url.find("://"); scheme != std::string_view::npos)
    bad_url("unsupported scheme '" + std::string(url.substr(0, scheme)) +
            "' (use holdfast://host:port, rediss://host:port or unix:///path)");
  return parse_tcp(url);
}

}  // namespace holdfast::inline v0::client_internal
