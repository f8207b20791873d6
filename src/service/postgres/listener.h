// Listener: one dedicated connection that LISTENs on the cluster's channels and hands every
// notification to a callback, on its own thread.
//
//  1. start() connects to the primary (pg_primary.h) and LISTENs (an error here stops the node
//     at start).
//  2. The thread polls the socket and an eventfd (for stop()). Each notification is passed to
//     on_notify(channel, payload, sender backend pid) in the order PostgreSQL delivered them.
//  3. When the connection breaks, or the primary's epoch moves on (another server is the
//     primary now: notifications come only from it; poke() says so at once, and the thread
//     looks at least once a second by itself), notifications sent meanwhile are lost.
//     The thread reconnects (backing off up to 250 ms) and then calls on_resync(), so the
//     owner re-checks whatever a lost notification might have announced (waiters try again,
//     rules reload).
//  4. stop() wakes the thread and joins it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "service/postgres/pg_conn.h"
#include "service/postgres/pg_primary.h"

namespace holdfast::pg {

class Listener {
 public:
  using NotifyFn =
      std::function<void(const std::string& channel, const std::string& payload, int sender_pid)>;

  Listener(Primary& primary, std::vector<std::string> channels, NotifyFn on_notify,
           std::function<void()> on_resync);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  Status start();
  void stop();
  // The primary may have changed: the thread looks at the epoch now (any thread; after start()).
  void poke();

 private:
  Status connect_and_listen();
  void run();
  // Reads what arrived; false when the connection broke.
  bool drain();
  // Resets the eventfd after poke()s (stop() needs none: the thread checks stopping_ first).
  void take_pokes();

  Primary& primary_;
  const std::vector<std::string> channels_;
  NotifyFn on_notify_;
  std::function<void()> on_resync_;
  std::unique_ptr<PgConn> conn_;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace holdfast::pg
