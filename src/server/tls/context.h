// The TLS settings the listeners hand to each new connection: an OpenSSL context with the
// server's certificate, key and CA loaded (load_server_context, in server/tls/load.h), and the
// time a handshake may take. SIGHUP makes a new one for the connections that come after it;
// a connection keeps the one it started with (shared_ptr) for as long as it lives.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>

namespace holdfast::tls {

struct ServerContext {
  ServerContext() : ssl(boost::asio::ssl::context::tls_server) {}
  boost::asio::ssl::context ssl;
  std::chrono::milliseconds handshake_timeout{10'000};
};

using ServerContextPtr = std::shared_ptr<ServerContext>;

}  // namespace holdfast::tls
