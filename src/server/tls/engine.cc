#include "server/tls/engine.h"

#include <openssl/err.h>

#include <cstring>

#include "server/tls/handshake.h"

namespace holdfast::tls {

// The BIO OpenSSL reads ciphertext from and writes it to: the engine's input buffer and output
// string. A read of an empty buffer asks to be retried (SSL_ERROR_WANT_READ), never blocks.
struct EngineBio {
  static Engine& of(BIO* b) { return *static_cast<Engine*>(BIO_get_data(b)); }

  static int write(BIO* b, const char* data, std::size_t n, std::size_t* written) {
    BIO_clear_retry_flags(b);
    of(b).out_.append(data, n);
    *written = n;
    return 1;
  }

  static int read(BIO* b, char* out, std::size_t n, std::size_t* got) {
    BIO_clear_retry_flags(b);
    Engine& e = of(b);
    const std::size_t available = e.whole_end_ - e.in_begin_;
    if (available == 0) {
      BIO_set_retry_read(b);
      *got = 0;
      return 0;
    }
    const std::size_t take = n < available ? n : available;
    std::memcpy(out, e.in_.get() + e.in_begin_, take);
    e.in_begin_ += take;
    if (e.in_begin_ == e.in_end_) e.in_begin_ = e.whole_end_ = e.in_end_ = 0;
    *got = take;
    return 1;
  }

  static long ctrl(BIO* b, int cmd, long, void*) {
    switch (cmd) {
      case BIO_CTRL_FLUSH:
        return 1;
      case BIO_CTRL_PENDING:
        return static_cast<long>(of(b).whole_end_ - of(b).in_begin_);
      default:
        return 0;
    }
  }

  static int create(BIO* b) {
    BIO_set_init(b, 1);
    return 1;
  }

  static const BIO_METHOD* method() {
    static BIO_METHOD* m = [] {
      BIO_METHOD* meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "holdfast");
      BIO_meth_set_write_ex(meth, &EngineBio::write);
      BIO_meth_set_read_ex(meth, &EngineBio::read);
      BIO_meth_set_ctrl(meth, &EngineBio::ctrl);
      BIO_meth_set_create(meth, &EngineBio::create);
      return meth;
    }();
    return m;
  }
};

Engine::Engine(SSL_CTX* context)
    : ssl_(SSL_new(context)), in_(std::make_unique<char[]>(kInputBytes)) {
  BIO* bio = BIO_new(EngineBio::method());
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);  // one BIO both ways: SSL_free frees it
  SSL_set_accept_state(ssl_);
}

Engine::~Engine() { SSL_free(ssl_); }

char* Engine::input_space() {
  if (in_begin_ > 0) {
    std::memmove(in_.get(), in_.get() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    whole_end_ -= in_begin_;
    in_begin_ = 0;
  }
  return in_.get() + in_end_;
}

void Engine::received(std::size_t n) {
  in_end_ += n;
  find_whole_records();
}

// A TLS record is a 5-byte header (type, version, length) and `length` bytes. Before the
// handshake is done, and for anything that does not look like a record (a plaintext client,
// a length no record has), everything goes to OpenSSL, which answers it at once.
void Engine::find_whole_records() {
  constexpr std::size_t kHeader = 5, kMaxBody = 16384 + 2048;
  if (!established_) {
    whole_end_ = in_end_;
    return;
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(in_.get());
  while (in_end_ - whole_end_ >= kHeader) {
    const unsigned char* h = bytes + whole_end_;
    const std::size_t body = (std::size_t{h[3]} << 8) | h[4];
    if (h[0] < 20 || h[0] > 24 || h[1] != 3 || body > kMaxBody) {
      whole_end_ = in_end_;
      return;
    }
    if (in_end_ - whole_end_ < kHeader + body) return;
    whole_end_ += kHeader + body;
  }
}

Engine::Status Engine::fail(int ssl_error) {
  const unsigned long error = ERR_peek_last_error();
  char text[256] = {};
  if (error != 0) {
    ERR_error_string_n(error, text, sizeof text);
    failure_ = classify_failure(error);
    failure_text_ = text;
  } else {
    failure_ = HandshakeFailure::kOther;
    failure_text_ = "SSL error " + std::to_string(ssl_error);
  }
  // The queue is the thread's: leave nothing in it for the next connection's calls to find.
  ERR_clear_error();
  return Status::kFailed;
}

Engine::Status Engine::handshake() {
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    established_ = true;
    // What came after the handshake's last message is read a record at a time from now on.
    whole_end_ = in_begin_;
    find_whole_records();
    return Status::kOk;
  }
  const int error = SSL_get_error(ssl_, r);
  if (error == SSL_ERROR_WANT_READ) return Status::kWantInput;
  return fail(error);
}

Engine::Status Engine::read(char* out, std::size_t cap, std::size_t* n) {
  *n = 0;
  if (!has_input()) return Status::kWantInput;
  if (SSL_read_ex(ssl_, out, cap, n) == 1) return Status::kOk;
  const int error = SSL_get_error(ssl_, 0);
  if (error == SSL_ERROR_WANT_READ) return Status::kWantInput;
  if (error == SSL_ERROR_ZERO_RETURN) return Status::kClosed;
  return fail(error);
}

bool Engine::write(std::string_view plain) {
  if (plain.empty()) return true;
  std::size_t written = 0;
  // The BIO takes everything, so one call writes every record of the batch.
  if (SSL_write_ex(ssl_, plain.data(), plain.size(), &written) == 1 && written == plain.size())
    return true;
  fail(SSL_get_error(ssl_, 0));
  return false;
}

bool Engine::shutdown() {
  const int r = SSL_shutdown(ssl_);
  ERR_clear_error();
  return r >= 0 && !out_.empty();
}

}  // namespace holdfast::tls
