// Holdfast as the harness starts it:
//   holdfast serve --listen 127.0.0.1:P --http 127.0.0.1:Q --unix DIR/holdfast.sock
//                  --data-dir DIR --fsync always|never|horizon [extra args]
// in local open mode (no credentials, loopback only), driven over RESP on TCP, with its own
// LOCK.* commands or, as `holdfast-redis-*`, with the Redis lock idiom exactly as the `redis`
// targets are driven (SET NX PX, EVALSHA compare-and-delete); with `tls` (the target
// holdfast-never-tls) the RESP listener speaks TLS with a certificate made for the run
// (--tls-cert, --tls-key). Besides the
// Target interface it can crash (kill -9) and restart on the same data folder, for the
// restart-time workload.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../process.h"
#include "../target.h"
#include "resp_client.h"

namespace holdfast::bench {

enum class HoldfastFsync : std::uint8_t { kAlways, kNever, kHorizon };
// "always", "never", "horizon": the --fsync value and the end of the target's name.
const char* fsync_flag(HoldfastFsync fsync);

class HoldfastTarget final : public Target {
 public:
  // `holders`: the semaphore dialect's holders per key (resp_client.h).
  HoldfastTarget(std::filesystem::path binary, HoldfastFsync fsync,
                 std::vector<std::string> extra_args, RespDialect dialect = RespDialect::kHoldfast,
                 bool tls = false, std::uint32_t holders = 1);
  ~HoldfastTarget() override { stop(); }

  std::string name() const override;
  std::string description() const override;
  void start(const std::filesystem::path& dir) override;
  void stop() override;
  pid_t server_pid() const override { return process_.pid(); }
  std::unique_ptr<LockClient> connect(EventLoop& loop) override;
  bool supports_blocking_acquire() const override { return dialect_ == RespDialect::kHoldfast; }
  bool speaks_resp() const override { return true; }
  std::uint16_t resp_port() const override { return port_; }
  std::uint16_t http_port() const override { return http_port_; }
  bool tls() const override { return wants_tls_; }

  // SIGKILL, no goodbye: what a crash looks like to the data folder.
  void crash() { process_.kill_hard(); }
  // Starts again on the same folder and ports; returns the milliseconds from exec until the
  // server answered PING, or throws if it did not within timeout_ms.
  double restart(int timeout_ms);
  std::uint16_t port() const { return port_; }

 private:
  void spawn();
  double wait_ready(int timeout_ms);

  std::filesystem::path binary_;
  HoldfastFsync fsync_;
  std::vector<std::string> extra_args_;
  RespDialect dialect_;
  std::shared_ptr<SSL_CTX> tls_;  // the client side's context; null: plain TCP
  bool wants_tls_;
  std::vector<std::string> tls_args_;  // --tls-cert, --tls-key once start() made them
  std::uint32_t holders_;
  std::string script_sha_;  // dialect_script(dialect_), loaded
  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  std::uint16_t http_port_ = 0;
  ChildProcess process_;
};

}  // namespace holdfast::bench
