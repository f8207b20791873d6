// Keeps reading the server's log while the torture runs, and serialises every use of the
// ServerProcess with that reading. A server that logs into a pipe nobody reads stops when the
// pipe is full (a node over PostgreSQL logs about a hundred lines each time its database
// restarts), which would look like a fault of the server's own.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "support/server_process.h"
#include "torture/history.h"

namespace holdfast::torture {

class ServerWatch {
 public:
  explicit ServerWatch(testing::ServerProcess& server);
  ~ServerWatch();
  ServerWatch(const ServerWatch&) = delete;
  ServerWatch& operator=(const ServerWatch&) = delete;

  // Runs fn(server) while the log is not being read.
  template <typename Fn>
  auto with(Fn&& fn) {
    std::lock_guard lock(mu_);
    return fn(server_);
  }

  std::int64_t lines() const;
  // The last lines the server logged, for a report of a violation.
  std::string tail() const;

 private:
  void run();

  testing::ServerProcess& server_;
  mutable std::mutex mu_;
  std::int64_t lines_ = 0;
  std::deque<std::string> tail_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Stops the server with SIGTERM, as an operator would; it must exit 0 within 10 s (then it is
// killed, and that is a violation).
void stop_server(ServerWatch& watch, History& history);

}  // namespace holdfast::torture
