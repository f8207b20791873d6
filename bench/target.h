// Target: a lock service under test, which the harness starts itself on loopback in a
// temporary folder and stops by pid, and which hands out LockClient connections to it.
//
// Lifecycle: start(dir) -> any number of connect() -> stop() (idempotent, also run by the
// destructor, so an exception or SIGINT anywhere still stops the server).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "event_loop.h"
#include "lock_client.h"

namespace holdfast::bench {

class Target {
 public:
  virtual ~Target() = default;

  // The name used in --targets and in the report, e.g. "redis-aof".
  virtual std::string name() const = 0;
  // One line for the report: what runs and how it is configured.
  virtual std::string description() const = 0;

  // Starts the server with its data under `dir` (created by the caller, empty) and waits
  // until it answers. Throws std::runtime_error with the server's log tail on failure.
  virtual void start(const std::filesystem::path& dir) = 0;
  virtual void stop() = 0;

  // The server's pid, the root of its process tree (for CPU and memory).
  virtual pid_t server_pid() const = 0;
  // Every process tree whose CPU counts as the server's (a target made of several servers,
  // e.g. Holdfast nodes and their PostgreSQL). Default: server_pid().
  virtual std::vector<pid_t> server_pids() const { return {server_pid()}; }

  // Opens one connection, does its per-connection set-up (prepared statements, ...) and
  // registers it with `loop`. Throws std::runtime_error on failure.
  virtual std::unique_ptr<LockClient> connect(EventLoop& loop) = 0;

  virtual bool supports_blocking_acquire() const { return false; }
  // Speaks RESP: ping and pipelined operations are available.
  virtual bool speaks_resp() const { return false; }
  // The RESP port on 127.0.0.1, for connections the harness opens itself (watchers and
  // subscribers of bench/fanout.h); 0 when there is none.
  virtual std::uint16_t resp_port() const { return 0; }
  // Every RESP port of the service, one per node of a scale-out target (its first is the one
  // resp_port() would give); none when it does not speak RESP.
  virtual std::vector<std::uint16_t> resp_ports() const {
    if (resp_port() == 0) return {};
    return {resp_port()};
  }
  // libpq connection string of the PostgreSQL that is the service itself (advisory locks);
  // "" for every other target.
  virtual std::string sql_conninfo() const { return ""; }
  // Its HTTP API's port (Holdfast's /v1/events and /metrics); 0: none.
  virtual std::uint16_t http_port() const { return 0; }
  // Its connections speak TLS: it takes part in the tls workload (j) only, beside the same
  // server over plain TCP.
  virtual bool tls() const { return false; }
};

// The last `max_bytes` of a log file, for error messages.
std::string log_tail(const std::filesystem::path& log, std::size_t max_bytes = 2000);

}  // namespace holdfast::bench
