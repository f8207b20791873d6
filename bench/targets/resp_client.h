// RespLockClient: a LockClient over one non-blocking RESP connection, in one of two dialects:
//   - Holdfast: LOCK.TRY <key> TTL <ms>          -> hold map (RESP2 flat array) with `handle`, or
//   nil
//               LOCK.ACQUIRE <key> TTL <ms> TIMEOUT <ms> -> hold map, or -LOCK_TIMEOUT ...
//               LOCK.RELEASE <key> <handle>      -> {released: 1|0, reason?}
//   - Redis:    SET <key> <token> NX PX <ms>      -> +OK, or nil
//               EVALSHA <sha> 1 <key> <token>     -> :1 released, :0 not ours
//                 (the compare-and-delete script, loaded once per server with SCRIPT LOAD)
//   - Semaphore: what redis-semaphore's Semaphore sends (its holders are a sorted set):
//               EVALSHA <sha> 1 semaphore:<key> <limit> <token> <ms> <now>  -> :1 taken, :0 full
//               ZREM semaphore:<key> <token>      -> :1 released, :0 not ours
//                 (its acquire script, loaded with SCRIPT LOAD). `holders` locks in a row share
//                 one key whose limit is `holders`, so each holder is one member of a sorted set
//                 of `holders` members; 1 makes every lock its own semaphore of one permit.
// Both answer PING with +PONG. Requests may be pipelined to any depth; replies are matched to
// requests in order. Over TLS (a TlsChannel) the requests of an iteration become records with
// one SSL_write and leave in the same one send; what arrives is decrypted before it is parsed.
// On a loop in the library shape (EventLoop::set_library_shape) requests leave only once epoll
// has reported the socket writable.
//
// Also the blocking helpers the targets use before a measurement: wait until a server answers
// PING, and send one command and read its reply.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../byte_buffer.h"
#include "../event_loop.h"
#include "../lock_client.h"
#include "../resp.h"
#include "../tls_channel.h"

namespace holdfast::bench {

enum class RespDialect : std::uint8_t { kHoldfast, kRedis, kSemaphore };

// The compare-and-delete script every Redis lock client uses for release.
inline constexpr std::string_view kRedisReleaseScript =
    "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 "
    "end";

// redis-semaphore 5.8.0's acquire script (lib/semaphore/acquire/lua.js), as it sends it.
inline constexpr std::string_view kSemaphoreAcquireScript = R"lua(
  local key = KEYS[1]
  local limit = tonumber(ARGV[1])
  local identifier = ARGV[2]
  local lockTimeout = tonumber(ARGV[3])
  local now = tonumber(ARGV[4])
  local expiredTimestamp = now - lockTimeout

  redis.call('zremrangebyscore', key, '-inf', expiredTimestamp)

  if redis.call('zcard', key) < limit then
    redis.call('zadd', key, now, identifier)
    redis.call('pexpire', key, lockTimeout)
    return 1
  else
    return 0
  end)lua";

// The script a dialect loads once per server: the Redis dialect's release, the semaphore
// dialect's acquire; none for Holdfast's own commands.
std::string_view dialect_script(RespDialect dialect);

class RespLockClient final : public LockClient, private IoHandler, private Flushable {
 public:
  // Takes ownership of `fd` (connected, non-blocking; with `tls`, its handshake done).
  // `script_sha` is the SHA1 of dialect_script(dialect); `holders` is the semaphore dialect's
  // holders per key.
  RespLockClient(EventLoop& loop, int fd, RespDialect dialect, std::string script_sha,
                 std::unique_ptr<TlsChannel> tls = nullptr, std::uint32_t holders = 1);
  ~RespLockClient() override;

  void try_acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint64_t tag) override;
  void acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint32_t timeout_ms,
               std::uint64_t tag) override;
  void acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint32_t timeout_ms,
               const AcquireMode& mode, std::uint64_t tag) override;
  void release(std::uint64_t lock, std::string_view handle, std::uint64_t tag) override;
  void ping(std::uint64_t tag) override;
  std::size_t in_flight() const override { return pending_.size(); }
  bool healthy() const override { return fd_ >= 0; }

 private:
  // What a queued request needs to interpret its reply. Redis tokens are generated here and
  // handed back as the handle, so they are kept inline (no allocation per request).
  struct Pending {
    OpKind kind;
    std::uint8_t token_len;
    char token[23];
    std::uint64_t tag;
  };

  void on_io(std::uint32_t events) override;
  void flush() override;
  void queue(Pending p);
  void handle_reply(const Pending& p);
  void fail(std::string_view why);
  std::string_view key_of(std::uint64_t lock);

  EventLoop& loop_;
  int fd_;
  RespDialect dialect_;
  std::string script_sha_;
  std::uint32_t holders_;
  ByteBuffer in_;
  ByteBuffer out_;
  std::unique_ptr<TlsChannel> tls_;  // TLS targets only
  std::deque<Pending> pending_;
  std::vector<resp::Token> tokens_;
  bool want_write_ = false;
  bool writable_ = false;  // in on_io(EPOLLOUT): the library shape may send now
  std::uint64_t rng_state_;
  char key_buf_[40];
};

// Blocking: connects to 127.0.0.1:port and sends PING until +PONG comes back or timeout_ms
// pass. Returns the milliseconds it took, or -1.
double wait_for_resp_ping(std::uint16_t port, int timeout_ms);

// Blocking: SCRIPT LOAD of `script` (over TLS with `tls`); returns its SHA1, or throws.
// A RespLockClient on a new connection to the RESP server on loopback `port`, over TLS with
// `tls` (null: plain TCP); `server` names it in the error when it cannot be reached.
std::unique_ptr<LockClient> connect_resp_client(EventLoop& loop, std::uint16_t port,
                                                const std::shared_ptr<SSL_CTX>& tls,
                                                RespDialect dialect, const std::string& script_sha,
                                                std::uint32_t holders, std::string_view server);

std::string load_script(std::uint16_t port, std::string_view script,
                        const std::shared_ptr<SSL_CTX>& tls = nullptr);

// Blocking: sends one command and returns its raw reply ("" on failure); over TLS with `tls`.
std::string resp_roundtrip(std::uint16_t port, std::initializer_list<std::string_view> args,
                           int timeout_ms = 5000, const std::shared_ptr<SSL_CTX>& tls = nullptr);

// The TLS targets' readiness: as wait_for_resp_ping, over TLS with the client context `tls`.
double wait_for_tls_ping(std::uint16_t port, const std::shared_ptr<SSL_CTX>& tls, int timeout_ms);

}  // namespace holdfast::bench
