// Server URLs: where a Client connects and with which credentials.
//
//   holdfast://[user[:token]@]host[:port]   TCP; port 7420 when omitted; IPv6 as [::1]
//   rediss://[user[:token]@]host[:port]     the same over TLS (and rediss://h1,h2 for nodes)
//   holdfast://:token@host:port             a bearer token without a user name
//   unix:///path/to.sock                    a Unix socket (also unix://:token@/path/to.sock)
//   host:port, host, /path/to.sock          shorthands for the two above
//   holdfast://[user[:token]@]h1:7420,h2:7420,h3   several nodes of one cluster (scale-out):
//                                           the client fails over from one to the next
//   h1:7420,h2:7420                         the same without the scheme
//
// User and token are percent-decoded (a token may contain any byte). Nothing is resolved or
// connected here; this is pure parsing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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
  bool tls = false;  // kTcp: rediss://

  // For messages: "127.0.0.1:7420", "[::1]:7420" or "unix:/path/to.sock". Never the token.
  std::string display() const;
};

// Throws InvalidArgumentError naming what is wrong with the URL (never echoing the token).
// A URL that lists several nodes is an error here: see parse_server_urls.
ServerAddress parse_server_url(std::string_view url);

// Every address of `url`, in the order given: one for a single server, one per node for a
// comma-separated node list (they share the URL's credentials). Unix socket URLs name one
// server. Throws InvalidArgumentError like parse_server_url (also for an empty list entry).
std::vector<ServerAddress> parse_server_urls(std::string_view url);

}  // namespace holdfast::inline v0::client_internal
