// TLS for the client's connections to rediss:// servers, over OpenSSL.
//
// One TlsContext per Client: the trusted CAs (ClientOptions::tls_ca, else the system's), and the
// client certificate and key (tls_cert, tls_key) when the server should know the caller by it.
// One TlsSession per connection, over its non-blocking socket: the handshake within the
// connection's deadline, then reads and writes that report when they must wait for the socket,
// so the connection's poll() with deadlines stays the one place that waits. The socket is
// written with send(MSG_NOSIGNAL), as on a plain connection: a server that went away never
// raises SIGPIPE in the application.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "holdfast/options.h"

typedef struct ssl_ctx_st SSL_CTX;  // OpenSSL's, as <openssl/ssl.h> declares them
typedef struct ssl_st SSL;

namespace holdfast::inline v0::client_internal {

class TlsContext {
 public:
  // Throws InvalidArgumentError naming an option whose file does not load.
  explicit TlsContext(const ClientOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* native() const { return ctx_; }
  bool verify_hostname() const { return verify_hostname_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  bool verify_hostname_ = true;
};

class TlsSession {
 public:
  // What a read or write needs before it can go on.
  enum class Io { kDone, kWantRead, kWantWrite, kClosed, kFailed };

  // Starts a client session over the connected socket `fd` (not owned) to `host` (a name: SNI
  // and the certificate's DNS names; an IP address: its IP addresses).
  TlsSession(const TlsContext& context, int fd, const std::string& host);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  Io handshake();
  // *n: bytes written or read (kDone only).
  Io write(const char* data, std::size_t size, std::size_t* n);
  Io read(char* out, std::size_t cap, std::size_t* n);
  // Reads what the socket has without taking application data: kDone when there is some,
  // kWantRead when the records held none (or there were none).
  Io peek();
  // Decrypted bytes waiting in the session: a read needs no wait for the socket.
  bool pending() const;
  // Sends close_notify if the socket takes it at once.
  void shutdown();
  // After kFailed: what went wrong, in words ("certificate verify failed: unable to get local
  // issuer certificate").
  const std::string& error() const { return error_; }

 private:
  Io result(int ret);
  SSL* ssl_ = nullptr;
  std::string error_;
};

}  // namespace holdfast::inline v0::client_internal
