// OpenSSL for the client (see tls.h).
#include "client/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "holdfast/errors.h"

namespace holdfast::inline v0::client_internal {
namespace {

// The socket as OpenSSL reads and writes it: recv, and send without SIGPIPE.
struct SocketBio {
  static int fd(BIO* b) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b))); }

  static int write(BIO* b, const char* data, std::size_t n, std::size_t* written) {
    BIO_clear_retry_flags(b);
    for (;;) {
      const ssize_t r = ::send(fd(b), data, n, MSG_NOSIGNAL);
      if (r >= 0) {
        *written = static_cast<std::size_t>(r);
        return 1;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(b);
      return 0;
    }
  }

  static int read(BIO* b, char* out, std::size_t n, std::size_t* got) {
    BIO_clear_retry_flags(b);
    for (;;) {
      const ssize_t r = ::recv(fd(b), out, n, 0);
      if (r > 0) {
        *got = static_cast<std::size_t>(r);
        return 1;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(b);
      *got = 0;
      return 0;  // 0 bytes without the retry flag: the end of the stream
    }
  }

  static long ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

  static int create(BIO* b) {
    BIO_set_init(b, 1);
    return 1;
  }

  static const BIO_METHOD* method() {
    static BIO_METHOD* m = [] {
      BIO_METHOD* meth =
          BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "holdfast client socket");
      BIO_meth_set_write_ex(meth, &SocketBio::write);
      BIO_meth_set_read_ex(meth, &SocketBio::read);
      BIO_meth_set_ctrl(meth, &SocketBio::ctrl);
      BIO_meth_set_create(meth, &SocketBio::create);
      return meth;
    }();
    return m;
  }
};

[[noreturn]] void bad_option(const std::string& message) {
  ERR_clear_error();
  throw InvalidArgumentError("INVALID_ARGUMENT", message);
}

std::string openssl_reason() {
  const char* reason = ERR_reason_error_string(ERR_peek_last_error());
  return reason != nullptr ? reason : "unknown OpenSSL error";
}

// Fails with the option's name and the system's reason when `path` cannot be read.
void check_readable(const char* option, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) bad_option(std::string(option) + " " + path + ": " + std::strerror(errno));
  std::fclose(f);
}

// PEM_read_* would ask a terminal for the pass phrase of an encrypted key: never.
int no_pass_phrase(char*, int, int, void*) { return -1; }

bool is_ip_address(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

TlsContext::TlsContext(const ClientOptions& o)
    : ctx_(SSL_CTX_new(TLS_client_method())), verify_hostname_(o.tls_verify_hostname) {
  if (ctx_ == nullptr) bad_option("TLS: cannot make an OpenSSL context: " + openssl_reason());
  try {
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (!o.tls_ca.empty()) {
      check_readable("tls_ca", o.tls_ca);
      if (SSL_CTX_load_verify_locations(ctx_, o.tls_ca.c_str(), nullptr) != 1)
        bad_option("tls_ca " + o.tls_ca + " has no certificate: " + openssl_reason());
    } else if (SSL_CTX_set_default_verify_paths(ctx_) != 1) {
      bad_option("TLS: cannot load the system's CA certificates: " + openssl_reason());
    }
    if (o.tls_cert.empty() != o.tls_key.empty())
      bad_option(o.tls_cert.empty() ? "tls_key needs tls_cert" : "tls_cert needs tls_key");
    if (!o.tls_cert.empty()) {
      check_readable("tls_cert", o.tls_cert);
      if (SSL_CTX_use_certificate_chain_file(ctx_, o.tls_cert.c_str()) != 1)
        bad_option("tls_cert " + o.tls_cert + " has no certificate: " + openssl_reason());
      check_readable("tls_key", o.tls_key);
      std::FILE* f = std::fopen(o.tls_key.c_str(), "rb");
      EVP_PKEY* key =
          f != nullptr ? PEM_read_PrivateKey(f, nullptr, &no_pass_phrase, nullptr) : nullptr;
      if (f != nullptr) std::fclose(f);
      if (key == nullptr)
        bad_option("tls_key " + o.tls_key +
                   " has no private key (a PEM key without a pass phrase is needed)");
      const bool used = SSL_CTX_use_PrivateKey(ctx_, key) == 1;
      EVP_PKEY_free(key);
      if (!used || SSL_CTX_check_private_key(ctx_) != 1)
        bad_option("the key in tls_key " + o.tls_key + " does not match the certificate in " +
                   "tls_cert " + o.tls_cert);
    }
  } catch (...) {
    SSL_CTX_free(ctx_);
    throw;
  }
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsSession::TlsSession(const TlsContext& context, int fd, const std::string& host)
    : ssl_(SSL_new(context.native())) {
  BIO* bio = BIO_new(SocketBio::method());
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl_, bio, bio);
  SSL_set_connect_state(ssl_);
  if (is_ip_address(host)) {
    if (context.verify_hostname())
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl_, host.c_str());
    if (context.verify_hostname()) SSL_set1_host(ssl_, host.c_str());
  }
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

TlsSession::Io TlsSession::result(int ret) {
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      return Io::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Io::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      return Io::kClosed;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) {  // the end of the stream, without close_notify
        error_ = errno != 0 ? std::strerror(errno) : "the server closed the connection";
        return errno != 0 ? Io::kFailed : Io::kClosed;
      }
      break;
    default:
      break;
  }
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK) {
    error_ = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
  } else {
    char text[256] = {};
    ERR_error_string_n(ERR_peek_last_error(), text, sizeof text);
    const char* reason = ERR_reason_error_string(ERR_peek_last_error());
    error_ = reason != nullptr ? reason : text;
  }
  ERR_clear_error();
  return Io::kFailed;
}

TlsSession::Io TlsSession::handshake() {
  errno = 0;
  const int r = SSL_do_handshake(ssl_);
  return r == 1 ? Io::kDone : result(r);
}

TlsSession::Io TlsSession::write(const char* data, std::size_t size, std::size_t* n) {
  errno = 0;
  *n = 0;
  return SSL_write_ex(ssl_, data, size, n) == 1 ? Io::kDone : result(0);
}

TlsSession::Io TlsSession::read(char* out, std::size_t cap, std::size_t* n) {
  errno = 0;
  *n = 0;
  return SSL_read_ex(ssl_, out, cap, n) == 1 ? Io::kDone : result(0);
}

TlsSession::Io TlsSession::peek() {
  errno = 0;
  char byte;
  std::size_t n = 0;
  return SSL_peek_ex(ssl_, &byte, 1, &n) == 1 ? Io::kDone : result(0);
}

bool TlsSession::pending() const { return SSL_pending(ssl_) > 0; }

void TlsSession::shutdown() {
  SSL_shutdown(ssl_);
  ERR_clear_error();
}

}  // namespace holdfast::inline v0::client_internal
