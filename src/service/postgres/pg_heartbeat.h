// Heartbeat: a node's proof of life in holdfast_nodes, on a thread and a connection of its own,
// so neither a busy pool nor slow housekeeping delays it (schema_liveness.cc counts on it).
//
// Every `every_ms` (at most a fifth of the session grace) it writes the node's heartbeat by
// the database clock; the statement also keeps when the node's unbroken contact with the
// database began (a gap over `gap_ms` since the last heartbeat begins it again). If the row
// was gone (another node presumed this one dead and freed its older session holds) it is
// written again and that is logged. A heartbeat that fails is logged once, with the time the
// database stayed away when it answers again, and tried again at the next beat.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "service/postgres/cluster_rows.h"

namespace holdfast::pg {

class Heartbeat {
 public:
  // `rows` runs on the heartbeat's own pool (one connection).
  Heartbeat(ClusterRows& rows, std::int64_t node_id, std::string name, Millis every_ms,
            Millis gap_ms);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  void start();
  void stop();
  // One heartbeat now, on the calling thread.
  Status beat();

 private:
  void run();

  ClusterRows& rows_;
  const std::int64_t node_id_;
  const std::string name_;
  const Millis every_ms_;
  const Millis gap_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  // Since when heartbeats fail (steady clock), for the line logged when one succeeds again.
  std::optional<std::chrono::steady_clock::time_point> failing_since_;
  std::thread thread_;
};

}  // namespace holdfast::pg
