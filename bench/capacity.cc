// Memory and restart workloads: see capacity.h.
#include "capacity.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "event_loop.h"
#include "proc_stats.h"
#include "process.h"
#include "targets/resp_client.h"
#include "workers.h"

namespace holdfast::bench {

namespace {

// Issues try-acquires for the next unclaimed lock of a shared range, `depth` at a time.
class Loader final : public ReplyListener {
 public:
  Loader(LockClient& client, std::uint64_t& next, std::uint64_t end, std::uint32_t ttl_ms,
         LoadResult& result)
      : client_(client), next_(next), end_(end), ttl_ms_(ttl_ms), result_(result) {
    client_.set_listener(this);
  }
  ~Loader() override { client_.set_listener(nullptr); }

  void start(int depth) {
    for (int i = 0; i < depth; ++i) issue();
  }
  bool done() const { return client_.in_flight() == 0; }

  void on_reply(const OpReply& r) override {
    if (r.status == OpStatus::kGranted) {
      ++result_.granted;
    } else if (r.status == OpStatus::kBusy) {
      ++result_.busy;
    } else {
      if (result_.errors++ == 0) result_.first_error = std::string(r.detail.substr(0, 300));
      failed_ = true;
      return;
    }
    issue();
  }

 private:
  void issue() {
    if (failed_ || next_ >= end_) return;
    client_.try_acquire(next_++, ttl_ms_, 0);
  }

  LockClient& client_;
  std::uint64_t& next_;
  std::uint64_t end_;
  std::uint32_t ttl_ms_;
  LoadResult& result_;
  bool failed_ = false;
};

}  // namespace

LoadResult load_holds(Target& target, std::uint64_t first_lock, std::uint64_t count,
                      std::uint32_t ttl_ms, int connections, int depth) {
  LoadResult result;
  EventLoop loop;
  std::vector<std::unique_ptr<LockClient>> clients;
  std::vector<std::unique_ptr<Loader>> loaders;
  std::uint64_t next = first_lock;
  const std::uint64_t end = first_lock + count;
  for (int i = 0; i < connections; ++i) clients.push_back(target.connect(loop));
  for (auto& c : clients)
    loaders.push_back(std::make_unique<Loader>(*c, next, end, ttl_ms, result));
  const std::int64_t start = now_ns();
  for (auto& l : loaders) l->start(depth);
  // Bounded: a server that stops answering must not hang the harness.
  const std::int64_t give_up = start + 600 * kNsPerSec;
  while (!interrupted() && now_ns() < give_up) {
    loop.run_once(now_ns() + 50 * kNsPerMs);
    if ((next >= end || result.errors > 0) &&
        std::all_of(loaders.begin(), loaders.end(), [](auto& l) { return l->done(); })) {
      break;
    }
  }
  result.seconds = static_cast<double>(now_ns() - start) / kNsPerSec;
  return result;
}

MemoryResult measure_memory(Target& target, std::uint64_t holds, int settle_ms) {
  auto settle = [settle_ms] { std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms)); };
  MemoryResult m;
  m.target = target.name();
  m.holds = holds;
  try {
    settle();
    m.rss_before = resident_bytes(target.server_pid());
    m.load = load_holds(target, kHoldsFirstLock, holds, kHourMs);
    settle();
    m.rss_after = resident_bytes(target.server_pid());
    if (m.load.errors > 0) throw std::runtime_error("loading failed: " + m.load.first_error);
    if (m.load.granted != holds) {
      throw std::runtime_error("only " + std::to_string(m.load.granted) + " of " +
                               std::to_string(holds) + " holds were granted");
    }
    m.bytes_per_hold = static_cast<double>(m.rss_after - m.rss_before) / static_cast<double>(holds);
  } catch (const std::exception& e) {
    m.failed = true;
    m.failure = e.what();
  }
  return m;
}

namespace {

// INFO holdfast's recovering_until_ms less the wall clock now, in milliseconds (0: granting).
double quarantine_left_ms(std::uint16_t port) {
  const std::string info = resp_roundtrip(port, {"INFO", "holdfast"});
  const std::string field = "recovering_until_ms:";
  const std::size_t at = info.find(field);
  if (at == std::string::npos) throw std::runtime_error("INFO holdfast has no " + field);
  const double until = std::stod(info.substr(at + field.size()));
  if (until <= 0) return 0;
  const double now = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
  return std::max(0.0, until - now);
}

}  // namespace

RestartResult measure_restart(HoldfastTarget& target, std::uint64_t holds) {
  RestartResult r;
  r.target = target.name();
  r.holds = holds;
  try {
    target.crash();
    r.empty_restart_ms = target.restart(30'000);
    r.load = load_holds(target, kHoldsFirstLock, holds, kHourMs);
    if (r.load.errors > 0) throw std::runtime_error("loading failed: " + r.load.first_error);
    // With --fsync never the server writes its log every 10 ms (nothing waits for the disk in
    // that mode); give it a few such periods so the holds are in the page cache before the
    // kill, which a kill -9 (unlike a power loss) does not lose.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    target.crash();
    r.restart_ms = target.restart(120'000);
    if (target.name() == "holdfast-horizon") {
      r.longest_lease_ms = kHourMs;
      r.quarantine_ms = quarantine_left_ms(target.port());
    }

    // Sample loaded locks: each must still be held (a try answers busy).
    const std::uint64_t sample = std::min<std::uint64_t>(holds, 1000);
    EventLoop loop;
    auto client = target.connect(loop);
    struct Counter final : ReplyListener {
      std::uint64_t answered = 0, busy = 0;
      void on_reply(const OpReply& reply) override {
        ++answered;
        if (reply.status == OpStatus::kBusy) ++busy;
      }
    } counter;
    client->set_listener(&counter);
    for (std::uint64_t i = 0; i < sample; ++i) {
      client->try_acquire(kHoldsFirstLock + i * holds / sample, kHourMs, 0);
    }
    const std::int64_t give_up = now_ns() + 30 * kNsPerSec;
    while (counter.answered < sample && now_ns() < give_up && !interrupted()) {
      loop.run_once(now_ns() + 50 * kNsPerMs);
    }
    client->set_listener(nullptr);
    r.sampled = sample;
    r.still_held = counter.busy;
  } catch (const std::exception& e) {
    r.failed = true;
    r.failure = e.what();
  }
  return r;
}

}  // namespace holdfast::bench
