// The RESP connection's TLS engine (server/tls/engine.h) against an OpenSSL client in memory,
// with the bytes between them cut anywhere: the handshake finishes however its flights are
// split, records decrypt to exactly what was sent, a partial record is never handed to
// OpenSSL (has_input() stays false until the record is whole), a batch of replies becomes
// records the client reads back, and a plaintext client or a broken record fails at once.
#include "server/tls/engine.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "server/tls/load.h"
#include "support/tls_certs.h"

namespace holdfast::tls {
namespace {

using testing::TestCertificates;

// An OpenSSL client over two memory BIOs: what it writes is taken with take(), what the server
// sent is given with give().
class MemoryClient {
 public:
  explicit MemoryClient(const std::string& ca) : ctx_(SSL_CTX_new(TLS_client_method())) {
    SSL_CTX_load_verify_locations(ctx_, ca.c_str(), nullptr);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(ctx_);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in_, -1);
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_connect_state(ssl_);
    SSL_set1_host(ssl_, "localhost");
  }
  ~MemoryClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }

  // One step of the handshake: true once it is done.
  bool handshake() {
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) return true;
    EXPECT_EQ(SSL_get_error(ssl_, r), SSL_ERROR_WANT_READ);
    return false;
  }
  void write(const std::string& plain) {
    std::size_t n = 0;
    ASSERT_EQ(SSL_write_ex(ssl_, plain.data(), plain.size(), &n), 1);
    ASSERT_EQ(n, plain.size());
  }
  std::string read_all() {
    std::string out;
    char buf[4096];
    std::size_t n = 0;
    while (SSL_read_ex(ssl_, buf, sizeof buf, &n) == 1) out.append(buf, n);
    ERR_clear_error();
    return out;
  }
  std::string take() {
    std::string bytes;
    char buf[4096];
    int n;
    while ((n = BIO_read(out_, buf, sizeof buf)) > 0)
      bytes.append(buf, static_cast<std::size_t>(n));
    return bytes;
  }
  void give(const std::string& bytes) {
    BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
  }

 private:
  SSL_CTX* ctx_;
  SSL* ssl_;
  BIO* in_;
  BIO* out_;
};

class TlsEngine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs_ = new TestCertificates(); }
  static void TearDownTestSuite() { delete certs_; }

  void SetUp() override {
    TlsConfig config;
    config.cert = certs_->server().cert;
    config.key = certs_->server().key;
    auto loaded = load_server_context(config);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    context_ = loaded->context;
    engine_ = std::make_unique<Engine>(context_->ssl.native_handle());
    client_ = std::make_unique<MemoryClient>(certs_->ca());
  }

  // Hands `bytes` to the engine in pieces of `piece` bytes, as socket reads would.
  void receive(const std::string& bytes, std::size_t piece) {
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      const std::size_t n = std::min(piece, bytes.size() - at);
      ASSERT_GE(engine_->input_space_size(), n);
      std::memcpy(engine_->input_space(), bytes.data() + at, n);
      engine_->received(n);
      if (!engine_->established()) {
        const Engine::Status st = engine_->handshake();
        ASSERT_NE(st, Engine::Status::kFailed) << engine_->failure_text();
      }
    }
  }

  // The handshake with each flight cut into pieces of `piece` bytes.
  void connect(std::size_t piece) {
    for (int step = 0; step < 10 && !engine_->established(); ++step) {
      client_->handshake();
      receive(client_->take(), piece);
      client_->give(engine_->output());
      engine_->clear_output();
    }
    ASSERT_TRUE(engine_->established());
    EXPECT_TRUE(client_->handshake());
    client_->give(engine_->output());  // session tickets, if any
    engine_->clear_output();
  }

  // Everything the engine can decrypt now.
  std::string decrypt_all() {
    std::string out;
    char buf[1024];
    for (;;) {
      std::size_t n = 0;
      const Engine::Status st = engine_->read(buf, sizeof buf, &n);
      if (st != Engine::Status::kOk) {
        EXPECT_EQ(st, Engine::Status::kWantInput) << engine_->failure_text();
        return out;
      }
      out.append(buf, n);
    }
  }

  static TestCertificates* certs_;
  ServerContextPtr context_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<MemoryClient> client_;
};

TestCertificates* TlsEngine::certs_ = nullptr;

TEST_F(TlsEngine, HandshakesWithItsFlightsCutAnywhere) {
  for (std::size_t piece : {1u, 7u, 100u, 100000u}) {
    SetUp();
    connect(piece);
    EXPECT_FALSE(engine_->has_input()) << piece;
  }
}

TEST_F(TlsEngine, RecordsCutAnywhereDecryptToWhatWasSentAndNoPartialOneReachesOpenSsl) {
  connect(100000);
  std::string sent;
  for (int i = 0; i < 5; ++i) {
    const std::string command = "*2\r\n$4\r\nPING\r\n$" + std::to_string(i + 1) + "\r\n" +
                                std::string(static_cast<std::size_t>(i + 1), 'x') + "\r\n";
    client_->write(command);  // one record each
    sent += command;
  }
  const std::string records = client_->take();
  std::string got;
  // A byte at a time: until a record is whole, the engine has nothing to give.
  for (std::size_t at = 0; at < records.size(); ++at) {
    std::memcpy(engine_->input_space(), records.data() + at, 1);
    engine_->received(1);
    const bool whole = engine_->has_input();
    const std::string part = decrypt_all();
    EXPECT_EQ(whole, !part.empty()) << "at byte " << at;
    got += part;
  }
  EXPECT_EQ(got, sent);
  EXPECT_FALSE(engine_->has_input());
}

TEST_F(TlsEngine, ABatchOfRepliesIsOneWriteTheClientReadsBack) {
  connect(100000);
  const std::string replies = "+PONG\r\n$3\r\nabc\r\n:42\r\n" + std::string(40000, 'r');
  ASSERT_TRUE(engine_->write(replies));
  const std::string records = engine_->output();
  engine_->clear_output();
  EXPECT_GT(records.size(), replies.size());  // three records of at most 16 KiB, and framing
  client_->give(records);
  EXPECT_EQ(client_->read_all(), replies);
  // close_notify goes out as a record too.
  EXPECT_TRUE(engine_->shutdown());
  EXPECT_FALSE(engine_->output().empty());
}

TEST_F(TlsEngine, ALeftoverRecordWaitsUntilThereIsRoomForIt) {
  connect(100000);
  client_->write(std::string(3000, 'a'));
  receive(client_->take(), 100000);
  // Room for 1000 bytes at a time: the rest of the record stays in the session.
  std::string got;
  char buf[1000];
  while (engine_->has_input()) {
    std::size_t n = 0;
    ASSERT_EQ(engine_->read(buf, sizeof buf, &n), Engine::Status::kOk);
    got.append(buf, n);
  }
  EXPECT_EQ(got, std::string(3000, 'a'));
}

TEST_F(TlsEngine, APlaintextClientFailsTheHandshakeAtOnce) {
  for (const std::string& plain : {std::string("*1\r\n$4\r\nPING\r\n"),
                                   std::string("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")}) {
    SetUp();
    std::memcpy(engine_->input_space(), plain.data(), plain.size());
    engine_->received(plain.size());
    EXPECT_EQ(engine_->handshake(), Engine::Status::kFailed);
    EXPECT_EQ(engine_->failure(), HandshakeFailure::kPlaintext) << engine_->failure_text();
  }
}

TEST_F(TlsEngine, BytesThatAreNoRecordAfterTheHandshakeFailAtOnce) {
  connect(100000);
  const std::string junk = "*1\r\n$4\r\nPING\r\n";  // plain RESP on an established session
  std::memcpy(engine_->input_space(), junk.data(), junk.size());
  engine_->received(junk.size());
  EXPECT_TRUE(engine_->has_input());  // handed to OpenSSL, which refuses it
  std::size_t n = 0;
  char buf[64];
  EXPECT_EQ(engine_->read(buf, sizeof buf, &n), Engine::Status::kFailed);
}

}  // namespace
}  // namespace holdfast::tls
