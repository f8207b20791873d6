// Holdfast target: see holdfast_target.h.
#include "holdfast_target.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include "../clock.h"
#include "../net.h"
#include "../process.h"
#include "resp_client.h"

namespace holdfast::bench {

const char* fsync_flag(HoldfastFsync fsync) {
  switch (fsync) {
    case HoldfastFsync::kAlways:
      return "always";
    case HoldfastFsync::kNever:
      return "never";
    case HoldfastFsync::kHorizon:
      return "horizon";
  }
  return "always";
}

HoldfastTarget::HoldfastTarget(std::filesystem::path binary, HoldfastFsync fsync,
                               std::vector<std::string> extra_args, RespDialect dialect, bool tls,
                               std::uint32_t holders)
    : binary_(std::move(binary)),
      fsync_(fsync),
      extra_args_(std::move(extra_args)),
      dialect_(dialect),
      wants_tls_(tls),
      holders_(holders) {}

std::string HoldfastTarget::name() const {
  const std::string prefix = dialect_ == RespDialect::kRedis       ? "holdfast-redis-"
                             : dialect_ == RespDialect::kSemaphore ? "holdfast-sem-"
                                                                   : "holdfast-";
  return prefix + fsync_flag(fsync_) + (wants_tls_ ? "-tls" : "");
}

std::string HoldfastTarget::description() const {
  std::string version = command_first_line({binary_.string(), "--version"});
  if (version.empty()) version = binary_.filename().string();
  std::string d = version + "; serve --fsync " + fsync_flag(fsync_);
  if (dialect_ == RespDialect::kRedis) d += "; SET NX PX + EVALSHA, as the redis targets";
  if (dialect_ == RespDialect::kSemaphore)
    d += "; redis-semaphore's Semaphore (acquire script + ZREM), as the redis-sem targets";
  if (wants_tls_) d += "; TLS on the RESP listener (--tls-cert, EC P-256; OpenSSL's defaults)";
  for (const auto& a : extra_args_) d += " " + a;
  return d;
}

void HoldfastTarget::spawn() {
  std::vector<std::string> argv = {binary_.string(), "serve",
                                   "--listen",       "127.0.0.1:" + std::to_string(port_),
                                   "--http",         "127.0.0.1:" + std::to_string(http_port_),
                                   "--unix",         (dir_ / "holdfast.sock").string(),
                                   "--data-dir",     (dir_ / "data").string(),
                                   "--fsync",        fsync_flag(fsync_),
                                   "--config",       (dir_ / "holdfast.toml").string()};
  argv.insert(argv.end(), tls_args_.begin(), tls_args_.end());
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_ = ChildProcess::spawn(argv, dir_ / "holdfast.log");
}

double HoldfastTarget::wait_ready(int timeout_ms) {
  return tls_ ? wait_for_tls_ping(port_, tls_, timeout_ms) : wait_for_resp_ping(port_, timeout_ms);
}

void HoldfastTarget::start(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(binary_)) {
    throw std::runtime_error("holdfast binary not found at " + binary_.string() +
                             " (build it, or pass --holdfast PATH)");
  }
  dir_ = dir;
  std::filesystem::create_directories(dir_ / "data");
  // Open mode is one principal (user:local), and the default cap of acquire attempts per user
  // and hour (600) would stop a benchmark in its first millisecond.
  std::ofstream(dir_ / "holdfast.toml") << "[limits]\nacquirePerUserPerHour = 1000000000000000\n";
  port_ = free_loopback_port();
  http_port_ = free_loopback_port();
  if (wants_tls_) {
    const TlsFiles files = make_tls_files(dir_);
    tls_args_ = {"--tls-cert", files.cert.string(), "--tls-key", files.key.string()};
    tls_ = tls_client_context(files.ca);
  }
  spawn();
  if (wait_ready(15000) < 0) {
    process_.stop();
    throw std::runtime_error("holdfast did not answer PING: " + log_tail(dir_ / "holdfast.log"));
  }
  if (dialect_ != RespDialect::kHoldfast)
    script_sha_ = load_script(port_, dialect_script(dialect_), tls_);
}

double HoldfastTarget::restart(int timeout_ms) {
  process_.kill_hard();
  const std::int64_t start = now_ns();
  spawn();
  if (wait_ready(timeout_ms) < 0) {
    throw std::runtime_error("holdfast did not answer PING within " + std::to_string(timeout_ms) +
                             " ms after restart: " + log_tail(dir_ / "holdfast.log"));
  }
  return static_cast<double>(now_ns() - start) / kNsPerMs;
}

void HoldfastTarget::stop() { process_.stop(); }

std::unique_ptr<LockClient> HoldfastTarget::connect(EventLoop& loop) {
  return connect_resp_client(loop, port_, tls_, dialect_, script_sha_, holders_, "holdfast");
}

}  // namespace holdfast::bench
