// TLS for the load generator's RESP connections (the tls workload, (j)): the client side of a
// session over two of the connection's buffers, so the event loop's sockets, its one send per
// connection per iteration and its reads stay as on a plain connection. Records received go
// into incoming(), decrypt() turns them into the reply buffer; encrypt() turns a batch of
// requests into records in outgoing(), which the connection sends. No system call happens here
// after the handshake, which is blocking and done before a window starts (connections are
// reused, as client libraries reuse theirs).
//
// Also the certificates the TLS targets serve, made with the openssl command.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "byte_buffer.h"

typedef struct ssl_ctx_st SSL_CTX;  // OpenSSL's
typedef struct ssl_st SSL;

namespace holdfast::bench {

// A CA and a server certificate for 127.0.0.1 in `dir` (ca.pem, server.pem, server.key), EC
// P-256 as a deployment would pick. Throws std::runtime_error when openssl fails.
struct TlsFiles {
  std::filesystem::path ca, cert, key;
};
TlsFiles make_tls_files(const std::filesystem::path& dir);

// The client's OpenSSL context: TLS 1.2 or 1.3 with OpenSSL's defaults, trusting `ca`.
std::shared_ptr<SSL_CTX> tls_client_context(const std::filesystem::path& ca);

class TlsChannel {
 public:
  // The handshake over the connected non-blocking socket `fd`, within timeout_ms; the server's
  // certificate must chain to the context's CA and name 127.0.0.1. Throws std::runtime_error.
  TlsChannel(std::shared_ptr<SSL_CTX> context, int fd, int timeout_ms);
  ~TlsChannel();
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  ByteBuffer& incoming() { return in_; }
  ByteBuffer& outgoing() { return out_; }
  // Every byte of `plain` into records in outgoing() (one SSL_write); `plain` is emptied.
  void encrypt(ByteBuffer& plain);
  // Every whole record in incoming() onto the end of `plain`. False (with `error`) when the
  // session broke or the server ended it.
  bool decrypt(ByteBuffer& plain, std::string& error);

 private:
  friend struct ChannelBio;
  std::shared_ptr<SSL_CTX> context_;
  SSL* ssl_ = nullptr;
  // Once the handshake is done, OpenSSL reads only the first `whole_` bytes of incoming():
  // whole records, so decrypt() stops when none is left instead of an SSL_read that fails.
  bool established_ = false;
  std::size_t whole_ = 0;
  ByteBuffer in_{32768};
  ByteBuffer out_{32768};
};

// Blocking, for set-up: one command over a fresh TLS connection to 127.0.0.1:port; its raw
// reply ("" on failure).
std::string tls_roundtrip(std::uint16_t port, const std::shared_ptr<SSL_CTX>& context,
                          const std::string& command, int timeout_ms);

}  // namespace holdfast::bench
