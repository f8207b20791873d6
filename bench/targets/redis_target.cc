// Redis target: see redis_target.h.
#include "redis_target.h"

#include <stdexcept>

#include "../net.h"
#include "../process.h"
#include "../resp.h"
#include "resp_client.h"

namespace holdfast::bench {

namespace {

class RedisTarget final : public Target {
 public:
  RedisTarget(RedisPersistence persistence, RespDialect dialect, std::uint32_t holders)
      : persistence_(persistence), dialect_(dialect), holders_(holders) {}
  ~RedisTarget() override { stop(); }

  std::string name() const override {
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
    if (persistence_ == RedisPersistence::kNone) {
      argv.insert(argv.end(), {"--appendonly", "no"});
    } else {
      argv.insert(argv.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    }
    process_ = ChildProcess::spawn(argv, dir / "redis.stdout");
    if (wait_for_resp_ping(port_, 10000) < 0) {
      process_.stop();
      throw std::runtime_error("redis-server did not answer PING: " + log_tail(log_));
    }
    script_sha_ = load_script(port_, dialect_script(dialect_));
  }

  void stop() override { process_.stop(); }
  pid_t server_pid() const override { return process_.pid(); }

  std::unique_ptr<LockClient> connect(EventLoop& loop) override {
    const int fd = connect_loopback(port_, 5000);
    if (fd < 0) throw std::runtime_error("cannot connect to redis-server");
    return std::make_unique<RespLockClient>(loop, fd, dialect_, script_sha_, holders_);
  }

  bool speaks_resp() const override { return true; }

 private:
  RedisPersistence persistence_;
  RespDialect dialect_;
  std::uint32_t holders_;
  std::uint16_t port_ = 0;
  std::filesystem::path log_;
  ChildProcess process_;
  std::string script_sha_;
};

}  // namespace

std::unique_ptr<Target> make_redis_target(RedisPersistence persistence, RespDialect dialect,
                                          std::uint32_t holders) {
  return std::make_unique<RedisTarget>(persistence, dialect, holders);
}

}  // namespace holdfast::bench
