// Server URLs: where a Client connects and with which credentials.
//
//   holdfast://[user[:token]@]host[:port]   TCP; port 7420 when omitted; IPv6 as [::1]
//   holdfast://:token@host:port             a bearer token without a user name
//   unix:///path/to.sock                    a Unix socket (also unix://:token@/path/to.sock)
//   host:port, host, /path/to.sock          shorthands for the two above
//
// User and token are percent-decoded (a token may contain any byte). Nothing is resolved or
// connected here; this is pure parsing.
#pragma once

#include <string>
#include <string_view>

namespace holdfast::inline v0::client_internal {

inline constexpr int kDefaultPort = 7420;

struct ServerAddress {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  // kTcp, without IPv6 brackets
  int port = kDefaultPort;
  std::string path;  // kUnix
  std::string user;
  std::string token;

  // For messages: "127.0.0.1:7420", "[::1]:7420" or "unix:/path/to.sock". Never the token.
  std::string display() const;
};

// Throws InvalidArgumentError naming what is wrong with the URL (never echoing the token).
ServerAddress parse_server_url(std::string_view url);

}  // namespace holdfast::inline v0::client_internal
