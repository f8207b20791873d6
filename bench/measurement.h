// One measurement: N connections to one target, one worker per connection, a warm-up, a
// timed window, a drain. Produces the figures the report prints.
//
// Steps:
//   1. open N connections (set-up cost is not measured) and start every worker;
//   2. warm-up: run, record nothing (connection buffers, server caches, JIT-less but still);
//   3. window: reset the counters, take CPU snapshots of the harness and of the server's
//      process tree, run until the window ends, take the snapshots again;
//   4. drain: workers issue nothing new and finish what is in flight (releases included, so no
//      hold is left behind for the next measurement), for at most a few seconds;
//   5. verify mutual exclusion over every critical section of 2-4 and close the connections.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_loop.h"
#include "histogram.h"
#include "lock_client.h"
#include "mutex_checker.h"
#include "target.h"

namespace holdfast::bench {

// What workers report into. Counters move only inside the window (step 3).
struct Recorder {
  bool recording = false;
  LatencyHistogram latency;
  std::uint64_t ops = 0;       // the workload's unit: a pair, a critical section, a request
  std::uint64_t busy = 0;      // try-acquires that found the lock held
  std::uint64_t timeouts = 0;  // blocking acquires that timed out
  std::uint64_t not_held = 0;  // releases answered "not yours"
  std::uint64_t errors = 0;    // counted always, window or not
  std::string first_error;
  MutexChecker checker;
  // A second class of unit beside `ops`, for workloads that have one: the writers' sections
  // of readers and writers on one key (`ops` and `latency` are then the readers').
  std::uint64_t writer_ops = 0;
  LatencyHistogram writer_latency;

  void op_done(std::int64_t latency_ns) {
    if (!recording) return;
    ++ops;
    latency.record(latency_ns);
  }
  void writer_done(std::int64_t latency_ns) {
    if (!recording) return;
    ++writer_ops;
    writer_latency.record(latency_ns);
  }
  void error(std::string_view detail) {
    if (errors++ == 0) first_error = std::string(detail.substr(0, 300));
  }
};

// A per-connection state machine. Subclasses issue operations on `client` and react to their
// replies; the base holds what they share.
class Worker : public ReplyListener, public TimerHandler {
 public:
  Worker(LockClient& client, Recorder& recorder, EventLoop& loop, std::uint64_t seed)
      : client_(client), recorder_(recorder), loop_(loop), rng_(seed | 1) {
    client_.set_listener(this);
  }
  ~Worker() override { client_.set_listener(nullptr); }

  virtual void start() = 0;
  // Step 4: issue nothing new. Idle once nothing is in flight.
  void stop() { stopping_ = true; }
  bool idle() const { return client_.in_flight() == 0; }
  // Units completed inside the window by this worker (fairness).
  std::uint64_t completed() const { return completed_; }

  void on_timer(std::uint64_t) override {}

 protected:
  std::uint64_t random() {
    // xorshift64*: fast, and good enough to spread keys.
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545F4914F6CDD1DULL;
  }
  void count_completed() {
    if (recorder_.recording) ++completed_;
  }
  // Records an unexpected reply and stops this worker: a broken target must not spin.
  void fail(const OpReply& r) {
    recorder_.error(r.detail.empty() ? std::string_view("unexpected reply") : r.detail);
    stopping_ = true;
  }

  LockClient& client_;
  Recorder& recorder_;
  EventLoop& loop_;
  bool stopping_ = false;

 private:
  std::uint64_t rng_;
  std::uint64_t completed_ = 0;
};

using WorkerFactory =
    std::function<std::unique_ptr<Worker>(int index, LockClient&, Recorder&, EventLoop&)>;

struct Measurement {
  std::string workload;  // "pairs", "hotkey", ...
  std::string variant;   // a workload's legs, when it has several: "shared", "semaphore", ...
  std::string target;
  int connections = 0;
  int depth = 1;
  double seconds = 0;
  std::uint64_t ops = 0;
  double ops_per_sec = 0;
  std::uint64_t busy = 0, timeouts = 0, not_held = 0, errors = 0;
  std::int64_t p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  double client_cpu_s = 0, server_cpu_s = 0;  // inside the window
  double client_poll_s = 0;  // of the window, the client's loop polling for work (EventLoop)
  MutexChecker::Verdict mutex;
  double fairness = 1;  // Jain's index over per-connection counts: 1 = even, 1/N = one wins all
  std::uint64_t min_per_connection = 0, max_per_connection = 0;
  std::string first_error;
  // Recorder::writer_ops and its figures; 0 when the workload has no second class.
  std::uint64_t writer_ops = 0;
  double writer_ops_per_sec = 0;
  std::int64_t writer_p50_ns = 0, writer_p99_ns = 0;
  LatencyHistogram writer_latency;
  bool failed = false;  // the measurement itself could not run (connect failed, ...)
  std::string failure;
  int rounds = 0;  // windows merged into this figure
  // (k): lock events the server made over the windows and their warm-ups (its
  // holdfast_events_total); -1: not counted.
  std::int64_t events_made = -1;
  // (k): lock-event watchers the server cut off for falling behind over the windows (its
  // holdfast_event_watchers_dropped_total); -1: not counted.
  std::int64_t watchers_dropped = -1;
  struct Window {
    double ops_per_sec = 0;
    std::int64_t p99_ns = 0;
  };
  std::vector<Window> windows;  // each window's own figures, in the order they ran

  // The raw material the derived figures above are computed from.
  LatencyHistogram latency;
  std::vector<std::uint64_t> per_connection;

  double client_cpu_pct() const { return seconds > 0 ? 100 * client_cpu_s / seconds : 0; }
  double server_cpu_pct() const { return seconds > 0 ? 100 * server_cpu_s / seconds : 0; }
  double client_poll_pct() const { return seconds > 0 ? 100 * client_poll_s / seconds : 0; }
  // Server CPU per unit of work: a figure that the host's drift moves less than ops/s.
  double server_us_per_op() const { return ops > 0 ? 1e6 * server_cpu_s / ops : 0; }
  // Client CPU per unit of work, its polling for work left out.
  double client_work_us_per_op() const {
    return ops > 0 ? 1e6 * (client_cpu_s - client_poll_s) / ops : 0;
  }
};

struct MeasureShape {
  int connections = 1;
  int depth = 1;
  double warmup_s = 0.5;
  double duration_s = 5;
  std::int64_t client_poll_us = 0;  // the client loop's poll window (EventLoop::set_idle_poll_us)
  bool library_client = false;      // the library shape (EventLoop::set_library_shape)
  // When above 0, the window goes on past duration_s until an operation completed, for up to
  // this many seconds more: a check that only asks whether operations complete (--smoke) must
  // not depend on how busy the host is (a target that syncs its disk may complete none in a
  // short window on a loaded machine).
  double until_one_op_s = 0;
};

// Runs steps 1-5 on a thread of its own, started for this window. Never throws: failures are
// in the result.
//
// Why a fresh thread: the kernel keeps scheduler state per task, such as how many different
// tasks it has woken lately (halved once a second), which decides where its wake-ups are
// placed. A client that has just driven 64 PostgreSQL backends carries that state into the
// next target's window for seconds; in the same run, Holdfast --fsync always made 50 800-55 600
// pairs/s at 64 connections after PostgreSQL's windows and 63 000-66 000 after Redis's, with
// the client using 20-28 % more CPU per pair. A new task starts every window alike.
Measurement measure(Target& target, const std::string& workload, const MeasureShape& shape,
                    const WorkerFactory& make_worker);

// Adds one round's window to a figure made of several rounds (counts, time, CPU, histogram,
// per-connection counts and verdicts add up) and recomputes the derived figures. A figure is
// taken in rounds interleaved across targets so that every target samples the same minutes
// of the host's drift.
void accumulate(Measurement& total, const Measurement& round);

// The lowest and highest ratio a[k] ÷ b[k] of throughput (or of p99 latency) over the windows
// two figures took in the same rounds (window k of one ran next to window k of the other).
// None unless both have the same number of windows, at least two, all with figures above zero.
struct RatioRange {
  double low = 0, high = 0;
};
// The same over two series of figures taken side by side, round by round.
std::optional<RatioRange> ratio_range(const std::vector<double>& a, const std::vector<double>& b);
std::optional<RatioRange> window_ratio_range(const Measurement& a, const Measurement& b,
                                             bool p99 = false);

}  // namespace holdfast::bench
