// (h) What a server costs when there is little to do: its CPU with many idle connections and
// many live holds, and its CPU while it answers one lock pair every few milliseconds. A lock
// server runs beside the applications it serves; what it burns while they are quiet is theirs.
#pragma once

#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "measurement.h"
#include "target.h"

namespace holdfast::bench {

struct IdleShape {
  int connections = 1000;         // opened, then left idle
  std::uint64_t holds = 100'000;  // loaded with a one-hour TTL before the idle window
  double idle_s = 30;             // the idle window
  // The paced window, taken in `paced_windows` windows that alternate across the targets. A
  // pair costs a server 50-90 µs, nearly all of it the kernel's sleep and wake-up, so a 3 s
  // window holds some 15 ms of CPU, and where the host's scheduler puts the threads moves that
  // by half either way: a ratio near 1.0 needs many windows.
  double paced_s = 60;
  int period_ms = 10;  // one try-acquire + release pair per period in it
  int paced_windows = 20;
};

struct IdleResult {
  std::string target;
  IdleShape shape;
  double idle_cpu_s = 0;          // server CPU over the idle window
  std::uint64_t paced_pairs = 0;  // pairs completed in the paced window
  bool failed = false;
  std::string failure;

  std::vector<double> paced_window_cpu_s;  // server CPU over each of the paced windows

  // Server CPU over the whole paced window.
  double paced_cpu_s() const {
    return std::accumulate(paced_window_cpu_s.begin(), paced_window_cpu_s.end(), 0.0);
  }
  double idle_pct() const { return shape.idle_s > 0 ? 100 * idle_cpu_s / shape.idle_s : 0; }
  double paced_pct() const { return shape.paced_s > 0 ? 100 * paced_cpu_s() / shape.paced_s : 0; }
};

// One target's (h), taken in steps so that the paced windows of several targets alternate in
// rounds, as every other figure does, and a ratio of two of them compares the same minutes of
// the host: the constructor loads the holds, opens the idle connections and measures the idle
// window; each paced_window() adds one round's share of the paced window.
class QuietServer {
 public:
  // REQUIRES: `target` started, and outlives this. Leaves the holds behind (they end in an
  // hour). A failure is reported in result(), and later windows then do nothing.
  QuietServer(Target& target, const IdleShape& shape);
  ~QuietServer();
  QuietServer(const QuietServer&) = delete;
  QuietServer& operator=(const QuietServer&) = delete;

  void paced_window(double seconds);
  const IdleResult& result() const { return result_; }

 private:
  struct Connections;  // the idle ones and the paced client, on one event loop
  Target& target_;
  IdleResult result_;
  std::unique_ptr<Connections> connections_;
};

// The lowest and highest ratio a ÷ b of paced CPU over the rounds both took; none unless both
// took the same rounds, at least two, with CPU above zero in each.
std::optional<RatioRange> paced_ratio_range(const IdleResult& a, const IdleResult& b);

}  // namespace holdfast::bench
