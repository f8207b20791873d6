#include "server/tls/load.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace holdfast::tls {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;

Error tls_error(const std::string& message) {
  ERR_clear_error();
  return invalid_argument("tls: " + message);
}

// "--tls-key /etc/holdfast/key.pem", how the messages name a file.
std::string named(const std::string& setting, const std::string& path) {
  return setting + " " + path;
}

Result<std::string> read_file(const std::string& setting, const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return tls_error("cannot read " + named(setting, path) + ": " +
                     (err != 0 ? std::strerror(err) : "cannot open the file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return tls_error("cannot read " + named(setting, path) + ": read error");
  return text.str();
}

// OpenSSL's words for the last error of this thread.
std::string ssl_reason() {
  const char* reason = ERR_reason_error_string(ERR_peek_last_error());
  return reason != nullptr ? reason : "unknown OpenSSL error";
}

Bio memory(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// PEM_read_bio_* would ask a terminal for the pass phrase of an encrypted key: never.
int no_pass_phrase(char*, int, int, void*) { return -1; }

// Every certificate of a PEM text, in order.
std::vector<Cert> certificates(const std::string& text) {
  std::vector<Cert> out;
  Bio bio = memory(text);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, &no_pass_phrase, nullptr))
    out.emplace_back(x);
  ERR_clear_error();  // the end of the text reads as an error
  return out;
}

std::string time_text(const ASN1_TIME* t) {
  Bio bio(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(bio.get(), t);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string subject_text(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0,
                     XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

}  // namespace

Result<Loaded> load_server_context(const TlsConfig& c) {
  auto context = std::make_shared<ServerContext>();
  context->handshake_timeout = std::chrono::milliseconds(c.handshake_timeout_ms);
  SSL_CTX* ctx = context->ssl.native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // No renegotiation (a client could make the server redo the costly half of a handshake at
  // will) and no compression (CRIME); the server's cipher order, OpenSSL's default list.
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Resumed sessions must be tied to this server's verification settings (OpenSSL refuses to
  // resume a session with a verified client certificate without it).
  static const unsigned char kSessionContext[] = "holdfast";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);

  auto cert_text = read_file(c.cert_setting, c.cert);
  if (!cert_text.ok()) return std::move(cert_text).error();
  std::vector<Cert> chain = certificates(*cert_text);
  if (chain.empty()) return tls_error(named(c.cert_setting, c.cert) + " has no certificate");
  if (SSL_CTX_use_certificate(ctx, chain.front().get()) != 1)
    return tls_error("cannot use the certificate in " + named(c.cert_setting, c.cert) + ": " +
                     ssl_reason());
  for (std::size_t i = 1; i < chain.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(ctx, chain[i].get()) != 1)
      return tls_error("cannot use intermediate certificate " + std::to_string(i + 1) + " of " +
                       named(c.cert_setting, c.cert));
  }

  auto key_text = read_file(c.key_setting, c.key);
  if (!key_text.ok()) return std::move(key_text).error();
  Bio key_bio = memory(*key_text);
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, &no_pass_phrase, nullptr));
  if (!key)
    return tls_error(named(c.key_setting, c.key) +
                     " has no private key (a PEM key without a pass phrase is needed)");
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1)
    return tls_error("the key in " + named(c.key_setting, c.key) +
                     " does not match the certificate in " + named(c.cert_setting, c.cert));

  if (!c.ca.empty()) {
    auto ca_text = read_file(c.ca_setting, c.ca);
    if (!ca_text.ok()) return std::move(ca_text).error();
    std::vector<Cert> cas = certificates(*ca_text);
    if (cas.empty()) return tls_error(named(c.ca_setting, c.ca) + " has no certificate");
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    for (const Cert& ca : cas) {
      // The CA verifies client certificates, and its name tells clients which to send.
      if (X509_STORE_add_cert(store, ca.get()) != 1 || SSL_CTX_add_client_CA(ctx, ca.get()) != 1)
        return tls_error("cannot use the certificates in " + named(c.ca_setting, c.ca) + ": " +
                         ssl_reason());
    }
  }
  switch (c.client_auth) {
    case TlsClientAuth::kNone:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case TlsClientAuth::kRequest:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case TlsClientAuth::kRequire:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  ERR_clear_error();

  Loaded loaded;
  X509* leaf = chain.front().get();
  loaded.certificate = subject_text(leaf) + ", valid until " + time_text(X509_get0_notAfter(leaf));
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0) {
    loaded.warning = "the certificate in " + named(c.cert_setting, c.cert) + " expired on " +
                     time_text(X509_get0_notAfter(leaf)) + ": clients will refuse it";
  } else if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0) {
    loaded.warning = "the certificate in " + named(c.cert_setting, c.cert) +
                     " is not valid before " + time_text(X509_get0_notBefore(leaf)) +
                     ": clients will refuse it until then";
  }
  loaded.context = std::move(context);
  return loaded;
}

}  // namespace holdfast::tls
