// One measurement: see measurement.h for the steps.
#include "measurement.h"

#include <algorithm>
#include <exception>

#include "clock.h"
#include "process.h"
#include "proc_stats.h"

namespace holdfast::bench {

namespace {

constexpr std::int64_t kDrainNs = 5 * kNsPerSec;

void run_until(EventLoop& loop, std::int64_t until_ns) {
  while (now_ns() < until_ns && !interrupted()) loop.run_once(until_ns);
}

}  // namespace

Measurement measure(Target& target, const std::string& workload, const MeasureShape& shape,
                    const WorkerFactory& make_worker) {
  Measurement m;
  m.workload = workload;
  m.target = target.name();
  m.connections = shape.connections;
  m.depth = shape.depth;
  try {
    EventLoop loop;
    Recorder rec;
    std::vector<std::unique_ptr<LockClient>> clients;
    // Declared after the clients so that workers go first: they unhook themselves as listeners.
    std::vector<std::unique_ptr<Worker>> workers;

    for (int i = 0; i < shape.connections; ++i) clients.push_back(target.connect(loop));
    for (int i = 0; i < shape.connections; ++i) {
      workers.push_back(make_worker(i, *clients[i], rec, loop));
    }
    loop.set_after_flush([&rec](std::int64_t sent_ns) { rec.checker.close_queued(sent_ns); });

    // Step 1-2.
    for (auto& w : workers) w->start();
    run_until(loop, now_ns() + static_cast<std::int64_t>(shape.warmup_s * kNsPerSec));

    // Step 3.
    rec.recording = true;
    const pid_t server = target.server_pid();
    const double client_cpu0 = self_cpu_seconds();
    const double server_cpu0 = process_tree_cpu_seconds(server);
    const std::int64_t start = now_ns();
    run_until(loop, start + static_cast<std::int64_t>(shape.duration_s * kNsPerSec));
    rec.recording = false;
    const std::int64_t end = now_ns();
    m.client_cpu_s = self_cpu_seconds() - client_cpu0;
    m.server_cpu_s = process_tree_cpu_seconds(server) - server_cpu0;
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
    m.ops_per_sec = m.seconds > 0 ? static_cast<double>(rec.ops) / m.seconds : 0;
    m.busy = rec.busy;
    m.timeouts = rec.timeouts;
    m.not_held = rec.not_held;
    m.errors = rec.errors;
    m.first_error = rec.first_error;
    m.p50_ns = rec.latency.percentile(50);
    m.p99_ns = rec.latency.percentile(99);
    m.p999_ns = rec.latency.percentile(99.9);
    m.max_ns = rec.latency.max();
    m.mutex = rec.checker.verify();
    double sum = 0, sum_sq = 0;
    m.min_per_connection = UINT64_MAX;
    for (auto& w : workers) {
      const double c = static_cast<double>(w->completed());
      sum += c;
      sum_sq += c * c;
      m.min_per_connection = std::min(m.min_per_connection, w->completed());
      m.max_per_connection = std::max(m.max_per_connection, w->completed());
    }
    m.fairness = sum_sq > 0 ? sum * sum / (static_cast<double>(workers.size()) * sum_sq) : 0;
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

}  // namespace holdfast::bench
