// Redis target: see redis_target.h.
#include "redis_target.h"

#include <unistd.h>

#include <stdexcept>

#include "../net.h"
#include "../process.h"
#include "../resp.h"
#include "../tls_channel.h"
#include "resp_client.h"

namespace holdfast::bench {

namespace {

class RedisTarget final : public Target {
 public:
  RedisTarget(RedisPersistence persistence, bool tls, RespDialect dialect, std::uint32_t holders)
      : persistence_(persistence), wants_tls_(tls), dialect_(dialect), holders_(holders) {}
  ~RedisTarget() override { stop(); }

  std::string name() const override {
    if (wants_tls_) return "redis-tls";
    const std::string base = dialect_ == RespDialect::kSemaphore ? "redis-sem" : "redis";
    return persistence_ == RedisPersistence::kNone ? base : base + "-aof";
  }
  std::string description() const override {
    // "Redis server v=7.0.15 sha=..." -> "Redis 7.0.15"
    std::string version = command_first_line({"redis-server", "--version"});
    if (const auto v = version.find("v="); v != std::string::npos) {
      version = "Redis " + version.substr(v + 2, version.find(' ', v) - v - 2);
    }
    return version +
           (persistence_ == RedisPersistence::kNone ? "; --save '' --appendonly no"
                                                    : "; --appendonly yes --appendfsync always") +
           (wants_tls_ ? "; --port 0 --tls-port (EC P-256 certificate, --tls-auth-clients no)"
                       : "") +
           (dialect_ == RespDialect::kSemaphore ? "; redis-semaphore's Semaphore" : "");
  }

  void start(const std::filesystem::path& dir) override {
    port_ = free_loopback_port();
    log_ = dir / "redis.log";
    std::vector<std::string> argv = {"redis-server", "--port",    std::to_string(port_),
                                     "--bind",       "127.0.0.1", "--dir",
                                     dir.string(),   "--save",    "",
                                     "--daemonize",  "no",        "--protected-mode",
                                     "no",           "--logfile", log_.string()};
    if (wants_tls_) {
      const TlsFiles files = make_tls_files(dir);
      argv[2] = "0";  // --port 0: no plain TCP
      argv.insert(argv.end(),
                  {"--tls-port", std::to_string(port_), "--tls-cert-file", files.cert.string(),
                   "--tls-key-file", files.key.string(), "--tls-ca-cert-file", files.ca.string(),
                   "--tls-auth-clients", "no"});
      tls_ = tls_client_context(files.ca);
    }
    if (persistence_ == RedisPersistence::kNone) {
      argv.insert(argv.end(), {"--appendonly", "no"});
    } else {
      argv.insert(argv.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    }
    process_ = ChildProcess::spawn(argv, dir / "redis.stdout");
    const double ready =
        tls_ ? wait_for_tls_ping(port_, tls_, 10000) : wait_for_resp_ping(port_, 10000);
    if (ready < 0) {
      process_.stop();
      throw std::runtime_error("redis-server did not answer PING: " + log_tail(log_));
    }
    script_sha_ = load_script(port_, dialect_script(dialect_), tls_);
  }

  void stop() override { process_.stop(); }
  pid_t server_pid() const override { return process_.pid(); }

  std::unique_ptr<LockClient> connect(EventLoop& loop) override {
    return connect_resp_client(loop, port_, tls_, dialect_, script_sha_, holders_, "redis-server");
  }

  bool speaks_resp() const override { return true; }
  std::uint16_t resp_port() const override { return port_; }
  bool tls() const override { return wants_tls_; }

 private:
  RedisPersistence persistence_;
  bool wants_tls_;
  RespDialect dialect_;
  std::uint32_t holders_;
  std::shared_ptr<SSL_CTX> tls_;  // the client side's context; null: plain TCP
  std::uint16_t port_ = 0;
  std::filesystem::path log_;
  ChildProcess process_;
  std::string script_sha_;
};

}  // namespace

std::unique_ptr<Target> make_redis_target(RedisPersistence persistence, bool tls,
                                          RespDialect dialect, std::uint32_t holders) {
  return std::make_unique<RedisTarget>(persistence, tls, dialect, holders);
}

}  // namespace holdfast::bench
