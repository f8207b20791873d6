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
  explicit RedisTarget(RedisPersistence persistence) : persistence_(persistence) {}
  ~RedisTarget() override { stop(); }

  std::string name() const override {
    return persistence_ == RedisPersistence::kNone ? "redis" : "redis-aof";
  }
  std::string description() const override {
    // "Redis server v=7.0.15 sha=..." -> "Redis 7.0.15"
    std::string version = command_first_line({"redis-server", "--version"});
    if (const auto v = version.find("v="); v != std::string::npos) {
      version = "Redis " + version.substr(v + 2, version.find(' ', v) - v - 2);
    }
    return version + (persistence_ == RedisPersistence::kNone
                          ? "; --save '' --appendonly no"
                          : "; --appendonly yes --appendfsync always");
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
    release_sha_ = load_release_script(port_);
  }

  void stop() override { process_.stop(); }
  pid_t server_pid() const override { return process_.pid(); }

  std::unique_ptr<LockClient> connect(EventLoop& loop) override {
    const int fd = connect_loopback(port_, 5000);
    if (fd < 0) throw std::runtime_error("cannot connect to redis-server");
    return std::make_unique<RespLockClient>(loop, fd, RespDialect::kRedis, release_sha_);
  }

  bool speaks_resp() const override { return true; }
  std::uint16_t resp_port() const override { return port_; }

 private:
  RedisPersistence persistence_;
  std::uint16_t port_ = 0;
  std::filesystem::path log_;
  ChildProcess process_;
  std::string release_sha_;
};

}  // namespace

std::unique_ptr<Target> make_redis_target(RedisPersistence persistence) {
  return std::make_unique<RedisTarget>(persistence);
}

}  // namespace holdfast::bench
