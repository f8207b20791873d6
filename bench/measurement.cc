// One measurement: see measurement.h for the steps.
#include "measurement.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>

#include "clock.h"
#include "proc_stats.h"
#include "process.h"

namespace holdfast::bench {

namespace {

constexpr std::int64_t kDrainNs = 5 * kNsPerSec;

void run_until(EventLoop& loop, std::int64_t until_ns) {
  while (now_ns() < until_ns && !interrupted()) loop.run_once(until_ns);
}

// Recomputes the figures that follow from the raw counts.
void derive(Measurement& m) {
  m.ops_per_sec = m.seconds > 0 ? static_cast<double>(m.ops) / m.seconds : 0;
  m.p50_ns = m.latency.percentile(50);
  m.p99_ns = m.latency.percentile(99);
  m.p999_ns = m.latency.percentile(99.9);
  m.max_ns = m.latency.max();
  m.writer_ops_per_sec = m.seconds > 0 ? static_cast<double>(m.writer_ops) / m.seconds : 0;
  m.writer_p50_ns = m.writer_latency.percentile(50);
  m.writer_p99_ns = m.writer_latency.percentile(99);
  double sum = 0, sum_sq = 0;
  m.min_per_connection = m.per_connection.empty() ? 0 : UINT64_MAX;
  m.max_per_connection = 0;
  for (const std::uint64_t n : m.per_connection) {
    const double c = static_cast<double>(n);
    sum += c;
    sum_sq += c * c;
    m.min_per_connection = std::min(m.min_per_connection, n);
    m.max_per_connection = std::max(m.max_per_connection, n);
  }
  m.fairness = sum_sq > 0 ? sum * sum / (static_cast<double>(m.per_connection.size()) * sum_sq) : 0;
}

}  // namespace

void accumulate(Measurement& total, const Measurement& round) {
  if (total.rounds == 0 && !total.failed) {
    total = round;
    return;
  }
  if (round.failed && !total.failed) {
    total.failed = true;
    total.failure = round.failure;
  }
  if (round.failed) return;
  total.rounds += round.rounds;
  total.seconds += round.seconds;
  total.ops += round.ops;
  total.busy += round.busy;
  total.timeouts += round.timeouts;
  total.not_held += round.not_held;
  if (total.errors == 0) total.first_error = round.first_error;
  total.errors += round.errors;
  total.client_cpu_s += round.client_cpu_s;
  total.client_poll_s += round.client_poll_s;
  total.server_cpu_s += round.server_cpu_s;
  if (round.events_made >= 0)
    total.events_made = std::max<std::int64_t>(total.events_made, 0) + round.events_made;
  if (round.watchers_dropped >= 0)
    total.watchers_dropped =
        std::max<std::int64_t>(total.watchers_dropped, 0) + round.watchers_dropped;
  total.latency.merge(round.latency);
  total.writer_ops += round.writer_ops;
  total.writer_latency.merge(round.writer_latency);
  if (total.mutex.violations == 0) total.mutex.first_violation = round.mutex.first_violation;
  total.mutex.sections += round.mutex.sections;
  total.mutex.violations += round.mutex.violations;
  total.mutex.unclosed += round.mutex.unclosed;
  total.windows.insert(total.windows.end(), round.windows.begin(), round.windows.end());
  total.per_connection.resize(std::max(total.per_connection.size(), round.per_connection.size()));
  for (std::size_t i = 0; i < round.per_connection.size(); ++i) {
    total.per_connection[i] += round.per_connection[i];
  }
  derive(total);
}

std::optional<RatioRange> ratio_range(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size()) return std::nullopt;
  RatioRange r{HUGE_VAL, 0};
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!(a[k] > 0 && b[k] > 0)) return std::nullopt;
    r.low = std::min(r.low, a[k] / b[k]);
    r.high = std::max(r.high, a[k] / b[k]);
  }
  return r;
}

std::optional<RatioRange> window_ratio_range(const Measurement& a, const Measurement& b, bool p99) {
  auto figures = [p99](const Measurement& m) {
    std::vector<double> v;
    for (const Measurement::Window& w : m.windows)
      v.push_back(p99 ? static_cast<double>(w.p99_ns) : w.ops_per_sec);
    return v;
  };
  return ratio_range(figures(a), figures(b));
}

namespace {

Measurement measure_on_this_thread(Target& target, const std::string& workload,
                                   const MeasureShape& shape, const WorkerFactory& make_worker) {
  Measurement m;
  m.workload = workload;
  m.target = target.name();
  m.connections = shape.connections;
  m.depth = shape.depth;
  try {
    EventLoop loop;
    loop.set_idle_poll_us(shape.client_poll_us);
    Recorder rec;
    std::vector<std::unique_ptr<LockClient>> clients;
    // Declared after the clients so that workers go first: they unhook themselves as listeners.
    std::vector<std::unique_ptr<Worker>> workers;

    for (int i = 0; i < shape.connections; ++i) clients.push_back(target.connect(loop));
    for (int i = 0; i < shape.connections; ++i) {
      workers.push_back(make_worker(i, *clients[i], rec, loop));
    }
    loop.set_after_flush([&rec](std::int64_t sent_ns) { rec.checker.close_queued(sent_ns); });
    if (shape.library_client) {
      loop.set_library_shape([&rec](const void* sender, std::int64_t sent_ns) {
        rec.checker.close_sent_by(sender, sent_ns);
      });
    }

    // Step 1-2.
    for (auto& w : workers) w->start();
    run_until(loop, now_ns() + static_cast<std::int64_t>(shape.warmup_s * kNsPerSec));

    // Step 3.
    rec.recording = true;
    const std::vector<pid_t> servers = target.server_pids();
    auto server_cpu = [&servers] {
      double s = 0;
      for (pid_t pid : servers) s += process_tree_cpu_seconds(pid);
      return s;
    };
    const double client_cpu0 = self_cpu_seconds();
    const std::int64_t polled0_us = loop.polled_us();
    const double server_cpu0 = server_cpu();
    const std::int64_t start = now_ns();
    run_until(loop, start + static_cast<std::int64_t>(shape.duration_s * kNsPerSec));
    if (shape.until_one_op_s > 0) {
      const std::int64_t give_up =
          now_ns() + static_cast<std::int64_t>(shape.until_one_op_s * kNsPerSec);
      while (rec.ops == 0 && now_ns() < give_up && !interrupted())
        loop.run_once(std::min(give_up, now_ns() + 10 * kNsPerMs));
    }
    rec.recording = false;
    const std::int64_t end = now_ns();
    m.client_cpu_s = self_cpu_seconds() - client_cpu0;
    m.client_poll_s = static_cast<double>(loop.polled_us() - polled0_us) / 1e6;
    m.server_cpu_s = server_cpu() - server_cpu0;
    m.seconds = static_cast<double>(end - start) / kNsPerSec;

    // Step 4.
    for (auto& w : workers) w->stop();
    const std::int64_t drain_until = now_ns() + kDrainNs;
    while (now_ns() < drain_until && !interrupted()) {
      if (std::all_of(workers.begin(), workers.end(), [](auto& w) { return w->idle(); })) break;
      loop.run_once(std::min(drain_until, now_ns() + 10 * kNsPerMs));
    }
    loop.clear_timers();

    // Step 5.
    m.ops = rec.ops;
    m.busy = rec.busy;
    m.timeouts = rec.timeouts;
    m.not_held = rec.not_held;
    m.errors = rec.errors;
    m.first_error = rec.first_error;
    m.latency = rec.latency;
    m.writer_ops = rec.writer_ops;
    m.writer_latency = rec.writer_latency;
    m.mutex = rec.checker.verify();
    for (auto& w : workers) m.per_connection.push_back(w->completed());
    m.rounds = 1;
    derive(m);
    m.windows = {{m.ops_per_sec, m.p99_ns}};
    if (interrupted()) {
      m.failed = true;
      m.failure = "interrupted";
    }
  } catch (const std::exception& e) {
    m.failed = true;
    m.failure = e.what();
  }
  return m;
}

}  // namespace

Measurement measure(Target& target, const std::string& workload, const MeasureShape& shape,
                    const WorkerFactory& make_worker) {
  Measurement m;
  std::thread window([&] { m = measure_on_this_thread(target, workload, shape, make_worker); });
  window.join();
  return m;
}

}  // namespace holdfast::bench
