// (h) What a server costs when there is little to do: its CPU with many idle connections and
// many live holds, and its CPU while it answers one lock pair every few milliseconds. A lock
// server runs beside the applications it serves; what it burns while they are quiet is theirs.
#pragma once

#include <cstdint>
#include <string>

#include "target.h"

namespace holdfast::bench {

struct IdleShape {
  int connections = 1000;         // opened, then left idle
  std::uint64_t holds = 100'000;  // loaded with a one-hour TTL before the idle window
  double idle_s = 30;             // the idle window
  double paced_s = 10;            // the paced window
  int period_ms = 10;             // one try-acquire + release pair per period in it
};

struct IdleResult {
  std::string target;
  IdleShape shape;
  double idle_cpu_s = 0;          // server CPU over the idle window
  std::uint64_t paced_pairs = 0;  // pairs completed in the paced window
  double paced_cpu_s = 0;         // server CPU over the paced window
  bool failed = false;
  std::string failure;

  double idle_pct() const { return shape.idle_s > 0 ? 100 * idle_cpu_s / shape.idle_s : 0; }
  double paced_pct() const { return shape.paced_s > 0 ? 100 * paced_cpu_s / shape.paced_s : 0; }
};

// REQUIRES: `target` started. Leaves the holds behind (they end in an hour).
IdleResult measure_idle(Target& target, const IdleShape& shape);

}  // namespace holdfast::bench
