// PgHousekeeper: the background work of one node over the shared PostgreSQL, on its own
// thread. Every node runs it; doing it on several nodes at once is harmless (each step is
// one conditional statement).
//
// Every tick (tick_ms: a fifth of the session grace, at most 1 s; the heartbeat itself runs
// on its own thread and connection, pg_heartbeat.h):
//  1. Free the session holds that the session-liveness rule lets this node free
//     (schema_liveness.cc: their node silent for the grace while this node was in unbroken
//     contact with the database, and granted before the grace), notifying each key (waiters
//     on every node retry); forget those nodes' rows and registrations.
//  2. Ask for the rule set's version; the owner reloads when it moved (this covers a lost
//     notification, so a rule change reaches every node within one tick at worst).
// Every sweep (sweep_ms, 5 s by default):
//  0. Before anything else, every_sweep() (the node reads the database's replication there,
//     which decides whether it may write at all).
//  3. Delete rows that have been free for a minute (a freed key keeps its row that long; see
//     hold_rows.h, "Tokens"), count the live holds for /metrics, and drop rate-limit minutes
//     that left the window. These scan the table: O(rows).
// Between ticks it runs the small jobs others defer() to it (unregistering a key nobody on this
// node waits for any more), so a waiter's reply never waits for them.
// A failed step is tried again next tick; the database being away does not stop the node, it
// only makes its calls answer UNAVAILABLE until it is back. It is logged once, and once more
// when the database answers again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "service/postgres/cluster_rows.h"
#include "service/postgres/hold_rows.h"

namespace holdfast {

struct HousekeeperOptions {
  std::int64_t node_id = 0;  // the judge of the liveness rule
  Millis tick_ms = 1'000;
  Millis session_grace_ms = 10'000;
  Millis gap_ms = 5'000;  // the liveness rule's gap (schema_liveness.cc)
  Millis sweep_ms = 5'000;
};

struct HousekeeperHooks {
  std::function<void(const std::vector<std::string>& keys)> keys_freed;  // poke local waiters
  std::function<void(std::int64_t version)> rules_version;               // reload if it moved
  std::function<void(std::int64_t held)> held_count;
  std::function<void()> every_sweep;
};

class PgHousekeeper {
 public:
  PgHousekeeper(pg::HoldRows& holds, pg::ClusterRows& cluster, HousekeeperOptions options,
                HousekeeperHooks hooks);
  ~PgHousekeeper();
  PgHousekeeper(const PgHousekeeper&) = delete;
  PgHousekeeper& operator=(const PgHousekeeper&) = delete;

  void start();
  void stop();
  // Runs one tick (and a sweep) now, on the calling thread. For start-up and tests.
  void tick(bool sweep);
  // Runs `job` on the housekeeper's thread soon (not waiting for the next tick). Jobs still
  // queued when it stops are dropped.
  void defer(std::function<void()> job);

 private:
  void run();

  pg::HoldRows& holds_;
  pg::ClusterRows& cluster_;
  const HousekeeperOptions options_;
  const HousekeeperHooks hooks_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::function<void()>> jobs_;
  bool failing_ = false;  // the last tick failed (logged once)
  std::thread thread_;
};

}  // namespace holdfast
