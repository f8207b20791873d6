// RespLockClient and the blocking RESP helpers: see resp_client.h.
#include "resp_client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "../clock.h"
#include "../net.h"
#include "../process.h"
#include "../socket_io.h"

namespace holdfast::bench {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string_view decimal(char* buf, std::size_t size, std::uint64_t v) {
  auto end = std::to_chars(buf, buf + size, v).ptr;
  return {buf, static_cast<std::size_t>(end - buf)};
}

}  // namespace

std::string_view dialect_script(RespDialect dialect) {
  switch (dialect) {
    case RespDialect::kRedis:
      return kRedisReleaseScript;
    case RespDialect::kSemaphore:
      return kSemaphoreAcquireScript;
    case RespDialect::kHoldfast:
      break;
  }
  return {};
}

RespLockClient::RespLockClient(EventLoop& loop, int fd, RespDialect dialect, std::string script_sha,
                               std::unique_ptr<TlsChannel> tls, std::uint32_t holders)
    : loop_(loop),
      fd_(fd),
      dialect_(dialect),
      script_sha_(std::move(script_sha)),
      holders_(holders == 0 ? 1 : holders),
      in_(65536),
      out_(16384),
      tls_(std::move(tls)),
      rng_state_(static_cast<std::uint64_t>(now_ns()) ^ (static_cast<std::uint64_t>(fd) << 48)) {
  loop_.watch(fd_, EPOLLIN, this);
}

RespLockClient::~RespLockClient() {
  loop_.forget(this);
  if (fd_ >= 0) {
    loop_.unwatch(fd_);
    close(fd_);
  }
}

std::string_view RespLockClient::key_of(std::uint64_t lock) {
  // redis-semaphore names its key "semaphore:" + the name it is given.
  const std::string_view prefix =
      dialect_ == RespDialect::kSemaphore ? "semaphore:bench:" : "bench:";
  if (dialect_ == RespDialect::kSemaphore) lock /= holders_;
  std::memcpy(key_buf_, prefix.data(), prefix.size());
  auto end = std::to_chars(key_buf_ + prefix.size(), key_buf_ + sizeof key_buf_, lock).ptr;
  return {key_buf_, static_cast<std::size_t>(end - key_buf_)};
}

void RespLockClient::queue(Pending p) {
  if (fd_ < 0) {
    deliver({p.kind, OpStatus::kError, p.tag, {}, "connection closed"});
    return;
  }
  pending_.push_back(p);
  loop_.mark_dirty(this);
}

void RespLockClient::try_acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint64_t tag) {
  char ttl_buf[16];
  const std::string_view ttl = decimal(ttl_buf, sizeof ttl_buf, ttl_ms);
  Pending p{OpKind::kTryAcquire, 0, {}, tag};
  if (dialect_ == RespDialect::kHoldfast) {
    resp::append_command(out_, {"LOCK.TRY", key_of(lock), "TTL", ttl});
    queue(p);
    return;
  }
  // A 22-character random token, as long as a base64 UUID: what a Redis lock client sends.
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::uint64_t r = splitmix64(rng_state_);
  for (int i = 0; i < 22; ++i) {
    if (i == 11) r = splitmix64(rng_state_);
    p.token[i] = kAlphabet[r % 62];
    r /= 62;
  }
  p.token_len = 22;
  const std::string_view token(p.token, p.token_len);
  if (dialect_ == RespDialect::kRedis) {
    resp::append_command(out_, {"SET", key_of(lock), token, "NX", "PX", ttl});
  } else {
    // The library passes its own clock's milliseconds (Date.now()) as the holder's score.
    char limit_buf[16], now_buf[24];
    const auto now_ms =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    resp::append_command(out_, {"EVALSHA", script_sha_, "1", key_of(lock),
                                decimal(limit_buf, sizeof limit_buf, holders_), token, ttl,
                                decimal(now_buf, sizeof now_buf, now_ms)});
  }
  queue(p);
}

void RespLockClient::acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint32_t timeout_ms,
                             std::uint64_t tag) {
  if (dialect_ != RespDialect::kHoldfast) {
    LockClient::acquire(lock, ttl_ms, timeout_ms, tag);
    return;
  }
  char ttl_buf[16], timeout_buf[16];
  resp::append_command(
      out_, {"LOCK.ACQUIRE", key_of(lock), "TTL", decimal(ttl_buf, sizeof ttl_buf, ttl_ms),
             "TIMEOUT", decimal(timeout_buf, sizeof timeout_buf, timeout_ms)});
  queue({OpKind::kAcquire, 0, {}, tag});
}

void RespLockClient::acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint32_t timeout_ms,
                             const AcquireMode& mode, std::uint64_t tag) {
  if (dialect_ != RespDialect::kHoldfast) {
    LockClient::acquire(lock, ttl_ms, timeout_ms, mode, tag);
    return;
  }
  char ttl_buf[16], timeout_buf[16], permits_buf[16], take_buf[16];
  const std::string_view key = key_of(lock);
  const std::string_view ttl = decimal(ttl_buf, sizeof ttl_buf, ttl_ms);
  const std::string_view timeout = decimal(timeout_buf, sizeof timeout_buf, timeout_ms);
  if (mode.permits > 0) {
    resp::append_command(out_, {"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", timeout, "PERMITS",
                                decimal(permits_buf, sizeof permits_buf, mode.permits), "TAKE",
                                decimal(take_buf, sizeof take_buf, mode.take)});
  } else if (mode.shared) {
    resp::append_command(out_,
                         {"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", timeout, "MODE", "SHARED"});
  } else {
    resp::append_command(out_, {"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", timeout});
  }
  queue({OpKind::kAcquire, 0, {}, tag});
}

void RespLockClient::release(std::uint64_t lock, std::string_view handle, std::uint64_t tag) {
  if (dialect_ == RespDialect::kHoldfast) {
    resp::append_command(out_, {"LOCK.RELEASE", key_of(lock), handle});
  } else if (dialect_ == RespDialect::kRedis) {
    resp::append_command(out_, {"EVALSHA", script_sha_, "1", key_of(lock), handle});
  } else {
    resp::append_command(out_, {"ZREM", key_of(lock), handle});
  }
  queue({OpKind::kRelease, 0, {}, tag});
}

void RespLockClient::ping(std::uint64_t tag) {
  resp::append_command(out_, {"PING"});
  queue({OpKind::kPing, 0, {}, tag});
}

void RespLockClient::flush() {
  if (fd_ < 0) return;
  if (loop_.library_shape() && !writable_) {
    // The library shape asks epoll whether the socket is writable first (on_io sends).
    if (!want_write_) {
      want_write_ = true;
      loop_.rewatch(fd_, EPOLLIN | EPOLLOUT, this);
    }
    return;
  }
  std::string error;
  if (tls_) tls_->encrypt(out_);
  ByteBuffer& bytes = tls_ ? tls_->outgoing() : out_;
  if (!send_buffered(loop_, this, fd_, bytes, want_write_, error)) fail("send: " + error);
}

void RespLockClient::on_io(std::uint32_t events) {
  if (events & EPOLLOUT) {
    writable_ = true;
    flush();  // and stops asking for EPOLLOUT once all is sent (send_buffered)
    writable_ = false;
    // All of it out (else the next EPOLLOUT sends the rest): its releases have left.
    if (loop_.library_shape() && !want_write_) loop_.sent(static_cast<const LockClient*>(this));
  }
  if (fd_ < 0 || !(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  std::string error;
  if (!recv_buffered(fd_, tls_ ? tls_->incoming() : in_, error)) {
    if (!error.empty()) fail(error);
    return;
  }
  if (tls_ && !tls_->decrypt(in_, error)) {
    fail(error);
    return;
  }
  while (!in_.empty() && fd_ >= 0) {
    const resp::ParseResult r = resp::parse_reply(in_.view(), tokens_);
    if (r.status == resp::ParseStatus::kIncomplete) break;
    if (r.status == resp::ParseStatus::kMalformed) {
      fail("malformed RESP reply");
      return;
    }
    if (pending_.empty()) {
      fail("reply without a request");
      return;
    }
    const Pending p = pending_.front();
    pending_.pop_front();
    handle_reply(p);
    in_.consume(r.consumed);
  }
}

void RespLockClient::handle_reply(const Pending& p) {
  const resp::Token& top = tokens_.front();
  OpReply reply{p.kind, OpStatus::kError, p.tag, {}, {}};
  if (top.type == resp::Type::kError) {
    reply.detail = top.text;
    if (p.kind == OpKind::kAcquire && top.text.starts_with("LOCK_TIMEOUT")) {
      reply.status = OpStatus::kTimeout;
    }
    deliver(reply);
    return;
  }
  reply.detail = "unexpected reply";
  switch (p.kind) {
    case OpKind::kTryAcquire:
    case OpKind::kAcquire:
      if (top.type == resp::Type::kNull) {
        reply.status = OpStatus::kBusy;
      } else if (dialect_ == RespDialect::kRedis) {
        if (top.type == resp::Type::kSimpleString && top.text == "OK") {
          reply.status = OpStatus::kGranted;
          reply.handle = std::string_view(p.token, p.token_len);
        }
      } else if (dialect_ == RespDialect::kSemaphore) {
        if (top.type == resp::Type::kInteger && (top.integer == 0 || top.integer == 1)) {
          reply.status = top.integer == 1 ? OpStatus::kGranted : OpStatus::kBusy;
          if (top.integer == 1) reply.handle = std::string_view(p.token, p.token_len);
        }
      } else if (auto handle = resp::field(tokens_, "handle");
                 handle &&
                 (handle->type == resp::Type::kBulk || handle->type == resp::Type::kSimpleString)) {
        reply.status = OpStatus::kGranted;
        reply.handle = handle->text;
      }
      break;
    case OpKind::kRelease:
      if (top.type == resp::Type::kInteger) {
        reply.status = top.integer == 1 ? OpStatus::kReleased : OpStatus::kNotHeld;
      } else if (auto released = resp::field(tokens_, "released")) {
        reply.status = resp::truthy(*released) ? OpStatus::kReleased : OpStatus::kNotHeld;
      }
      break;
    case OpKind::kPing:
      if (top.type == resp::Type::kSimpleString || top.type == resp::Type::kBulk) {
        reply.status = OpStatus::kPong;
      }
      break;
  }
  if (reply.status != OpStatus::kError) reply.detail = {};
  deliver(reply);
}

void RespLockClient::fail(std::string_view why) {
  if (fd_ < 0) return;
  loop_.unwatch(fd_);
  close(fd_);
  fd_ = -1;
  const std::string reason(why);
  while (!pending_.empty()) {
    const Pending p = pending_.front();
    pending_.pop_front();
    deliver({p.kind, OpStatus::kError, p.tag, {}, reason});
  }
}

double wait_for_resp_ping(std::uint16_t port, int timeout_ms) {
  const std::int64_t start = now_ns();
  const std::int64_t deadline = start + std::int64_t{timeout_ms} * kNsPerMs;
  while (now_ns() < deadline && !interrupted()) {
    const int fd = connect_loopback(port, 100);
    if (fd >= 0) {
      std::string reply;
      if (send_all(fd, "*1\r\n$4\r\nPING\r\n", 1000)) {
        while (reply.find("\r\n") == std::string::npos && recv_some(fd, reply, 1000)) {
        }
      }
      close(fd);
      // Holdfast may answer -UNAVAILABLE while it replays its log: not ready yet.
      if (reply.starts_with("+PONG")) return static_cast<double>(now_ns() - start) / kNsPerMs;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return -1;
}

std::string resp_roundtrip(std::uint16_t port, std::initializer_list<std::string_view> args,
                           int timeout_ms, const std::shared_ptr<SSL_CTX>& tls) {
  std::string request;
  resp::append_command(request, args);
  if (tls) return tls_roundtrip(port, tls, request, timeout_ms);
  const int fd = connect_loopback(port, timeout_ms);
  if (fd < 0) return "";
  std::string reply;
  std::vector<resp::Token> tokens;
  if (send_all(fd, request, timeout_ms)) {
    while (resp::parse_reply(reply, tokens).status == resp::ParseStatus::kIncomplete &&
           recv_some(fd, reply, timeout_ms)) {
    }
  }
  close(fd);
  return reply;
}

double wait_for_tls_ping(std::uint16_t port, const std::shared_ptr<SSL_CTX>& tls, int timeout_ms) {
  const std::int64_t start = now_ns();
  const std::int64_t deadline = start + std::int64_t{timeout_ms} * kNsPerMs;
  while (now_ns() < deadline && !interrupted()) {
    if (resp_roundtrip(port, {"PING"}, 1000, tls).starts_with("+PONG"))
      return static_cast<double>(now_ns() - start) / kNsPerMs;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return -1;
}

std::string load_script(std::uint16_t port, std::string_view script,
                        const std::shared_ptr<SSL_CTX>& tls) {
  const std::string reply = resp_roundtrip(port, {"SCRIPT", "LOAD", script}, 5000, tls);
  std::vector<resp::Token> tokens;
  if (resp::parse_reply(reply, tokens).status != resp::ParseStatus::kComplete ||
      tokens[0].type != resp::Type::kBulk) {
    throw std::runtime_error("SCRIPT LOAD failed: " + reply);
  }
  return std::string(tokens[0].text);
}

std::unique_ptr<LockClient> connect_resp_client(EventLoop& loop, std::uint16_t port,
                                                const std::shared_ptr<SSL_CTX>& tls,
                                                RespDialect dialect, const std::string& script_sha,
                                                std::uint32_t holders, std::string_view server) {
  const int fd = connect_loopback(port, 5000);
  if (fd < 0) throw std::runtime_error("cannot connect to " + std::string(server));
  std::unique_ptr<TlsChannel> channel;
  if (tls) {
    try {
      channel = std::make_unique<TlsChannel>(tls, fd, 5000);
    } catch (...) {
      close(fd);
      throw;
    }
  }
  return std::make_unique<RespLockClient>(loop, fd, dialect, script_sha, std::move(channel),
                                          holders);
}

}  // namespace holdfast::bench
