#include "tls_channel.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "net.h"
#include "process.h"
#include "resp.h"

namespace holdfast::bench {

// OpenSSL reads records from the channel's incoming() and writes them to its outgoing().
struct ChannelBio {
  static TlsChannel& of(BIO* b) { return *static_cast<TlsChannel*>(BIO_get_data(b)); }

  static int write(BIO* b, const char* data, std::size_t n, std::size_t* written) {
    BIO_clear_retry_flags(b);
    of(b).out_.append(std::string_view(data, n));
    *written = n;
    return 1;
  }

  static int read(BIO* b, char* out, std::size_t n, std::size_t* got) {
    BIO_clear_retry_flags(b);
    TlsChannel& c = of(b);
    ByteBuffer& in = c.in_;
    const std::size_t available = c.established_ ? c.whole_ : in.size();
    if (available == 0) {
      BIO_set_retry_read(b);
      *got = 0;
      return 0;
    }
    const std::size_t take = std::min(n, available);
    std::memcpy(out, in.view().data(), take);
    in.consume(take);
    if (c.established_) c.whole_ -= take;
    *got = take;
    return 1;
  }

  static long ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

  static int create(BIO* b) {
    BIO_set_init(b, 1);
    return 1;
  }

  static const BIO_METHOD* method() {
    static BIO_METHOD* m = [] {
      BIO_METHOD* meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "bench");
      BIO_meth_set_write_ex(meth, &ChannelBio::write);
      BIO_meth_set_read_ex(meth, &ChannelBio::read);
      BIO_meth_set_ctrl(meth, &ChannelBio::ctrl);
      BIO_meth_set_create(meth, &ChannelBio::create);
      return meth;
    }();
    return m;
  }
};

namespace {

std::string openssl_error() {
  char text[256] = {};
  ERR_error_string_n(ERR_get_error(), text, sizeof text);
  ERR_clear_error();
  return text;
}

void openssl_command(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string output;
  if (run_command(argv, output) != 0) throw std::runtime_error("openssl failed: " + output);
}

// The bytes of the whole records at the front of `in` (a TLS record: a 5-byte header with the
// body's length, then the body).
std::size_t whole_records(std::string_view in) {
  std::size_t at = 0;
  while (in.size() - at >= 5) {
    const std::size_t body = (std::size_t{static_cast<unsigned char>(in[at + 3])} << 8) |
                             static_cast<unsigned char>(in[at + 4]);
    if (in.size() - at < 5 + body) break;
    at += 5 + body;
  }
  return at;
}

}  // namespace

TlsFiles make_tls_files(const std::filesystem::path& dir) {
  const std::vector<std::string> key = {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                        "-nodes"};
  const TlsFiles f{dir / "ca.pem", dir / "server.pem", dir / "server.key"};
  std::vector<std::string> ca = {"req", "-x509"};
  ca.insert(ca.end(), key.begin(), key.end());
  ca.insert(ca.end(),
            {"-keyout", (dir / "ca.key").string(), "-out", f.ca.string(), "-days", "7", "-subj",
             "/CN=holdfast-bench CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
             "keyUsage=critical,keyCertSign"});
  openssl_command(ca);
  std::vector<std::string> req = {"req"};
  req.insert(req.end(), key.begin(), key.end());
  req.insert(req.end(), {"-keyout", f.key.string(), "-out", (dir / "server.csr").string(), "-subj",
                         "/CN=127.0.0.1"});
  openssl_command(req);
  {
    std::FILE* ext = std::fopen((dir / "server.ext").c_str(), "w");
    if (ext == nullptr) throw std::runtime_error("cannot write " + (dir / "server.ext").string());
    std::fputs("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n", ext);
    std::fclose(ext);
  }
  openssl_command({"x509", "-req", "-in", (dir / "server.csr").string(), "-CA", f.ca.string(),
                   "-CAkey", (dir / "ca.key").string(), "-set_serial", "1", "-days", "7",
                   "-extfile", (dir / "server.ext").string(), "-out", f.cert.string()});
  return f;
}

std::shared_ptr<SSL_CTX> tls_client_context(const std::filesystem::path& ca) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) throw std::runtime_error("SSL_CTX_new: " + openssl_error());
  std::shared_ptr<SSL_CTX> owned(ctx, &SSL_CTX_free);
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr) != 1)
    throw std::runtime_error("cannot load " + ca.string() + ": " + openssl_error());
  return owned;
}

TlsChannel::TlsChannel(std::shared_ptr<SSL_CTX> context, int fd, int timeout_ms)
    : context_(std::move(context)), ssl_(SSL_new(context_.get())) {
  BIO* bio = BIO_new(ChannelBio::method());
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);
  SSL_set_connect_state(ssl_);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), "127.0.0.1");
  for (;;) {
    const int r = SSL_do_handshake(ssl_);
    if (!out_.empty()) {
      if (!send_all(fd, out_.view(), timeout_ms)) {
        SSL_free(ssl_);
        throw std::runtime_error("TLS handshake: cannot send");
      }
      out_.clear();
    }
    if (r == 1) {
      established_ = true;
      return;
    }
    if (SSL_get_error(ssl_, r) != SSL_ERROR_WANT_READ) {
      const std::string why = openssl_error();
      SSL_free(ssl_);
      throw std::runtime_error("TLS handshake failed: " + why);
    }
    std::string got;
    if (!recv_some(fd, got, timeout_ms)) {
      SSL_free(ssl_);
      throw std::runtime_error("TLS handshake: no answer from the server");
    }
    in_.append(got);
  }
}

TlsChannel::~TlsChannel() { SSL_free(ssl_); }

void TlsChannel::encrypt(ByteBuffer& plain) {
  if (plain.empty()) return;
  std::size_t written = 0;
  // The BIO takes everything, so one call makes every record of the batch.
  SSL_write_ex(ssl_, plain.view().data(), plain.size(), &written);
  plain.consume(written);
}

bool TlsChannel::decrypt(ByteBuffer& plain, std::string& error) {
  whole_ = whole_records(in_.view());
  while (whole_ > 0 || SSL_pending(ssl_) > 0) {
    char* space = plain.reserve(16384);
    std::size_t n = 0;
    if (SSL_read_ex(ssl_, space, plain.room(), &n) == 1) {
      plain.commit(n);
      continue;
    }
    const int e = SSL_get_error(ssl_, 0);
    if (e == SSL_ERROR_WANT_READ) return true;
    error = e == SSL_ERROR_ZERO_RETURN ? "server ended the TLS session" : openssl_error();
    return false;
  }
  return true;
}

std::string tls_roundtrip(std::uint16_t port, const std::shared_ptr<SSL_CTX>& context,
                          const std::string& command, int timeout_ms) {
  const int fd = connect_loopback(port, timeout_ms);
  if (fd < 0) return "";
  std::string reply;
  try {
    TlsChannel channel(context, fd, timeout_ms);
    ByteBuffer plain;
    plain.append(command);
    channel.encrypt(plain);
    if (send_all(fd, channel.outgoing().view(), timeout_ms)) {
      channel.outgoing().clear();
      ByteBuffer replies;
      std::vector<resp::Token> tokens;
      std::string error, got;
      while (resp::parse_reply(replies.view(), tokens).status == resp::ParseStatus::kIncomplete) {
        got.clear();
        if (!recv_some(fd, got, timeout_ms)) break;
        channel.incoming().append(got);
        if (!channel.decrypt(replies, error)) break;
      }
      reply = std::string(replies.view());
    }
  } catch (const std::exception&) {
    reply.clear();
  }
  close(fd);
  return reply;
}

}  // namespace holdfast::bench
