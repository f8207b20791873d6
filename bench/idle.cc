// (h): see idle.h.
#include "idle.h"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "capacity.h"
#include "clock.h"
#include "proc_stats.h"
#include "process.h"
#include "workers.h"

namespace holdfast::bench {
namespace {

// Far from every other workload's locks (workers.h).
constexpr std::uint64_t kIdleHoldsFirstLock = 200'000'000;
constexpr std::uint64_t kPacedLock = 300'000'000;

double server_cpu(const Target& target) {
  double s = 0;
  for (pid_t pid : target.server_pids()) s += process_tree_cpu_seconds(pid);
  return s;
}

void sleep_seconds(double s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
  while (!interrupted() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace

struct QuietServer::Connections {
  // One reply at a time: the paced client sends, waits for the answer, and sleeps.
  class OneReply : public ReplyListener {
   public:
    void on_reply(const OpReply& reply) override {
      status = reply.status;
      handle.assign(reply.handle);
      detail.assign(reply.detail);
      done = true;
    }
    OpStatus wait(EventLoop& loop, const char* what) {
      const std::int64_t give_up = now_ns() + 10 * kNsPerSec;
      while (!done && now_ns() < give_up && !interrupted()) loop.run_once(now_ns() + 50 * kNsPerMs);
      if (!done) throw std::runtime_error(std::string("no reply to a paced ") + what);
      done = false;
      if (status == OpStatus::kError)
        throw std::runtime_error(std::string("a paced ") + what + " failed: " + detail);
      return status;
    }
    bool done = false;
    OpStatus status = OpStatus::kError;
    std::string handle, detail;
  };

  EventLoop loop;
  std::vector<std::unique_ptr<LockClient>> idle;
  std::unique_ptr<LockClient> client;
  OneReply reply;
};

QuietServer::QuietServer(Target& target, const IdleShape& shape) : target_(target) {
  result_.target = target.name();
  result_.shape = shape;
  try {
    const LoadResult load = load_holds(target, kIdleHoldsFirstLock, shape.holds, kHourMs);
    if (load.errors > 0) throw std::runtime_error("loading holds failed: " + load.first_error);
    connections_ = std::make_unique<Connections>();
    connections_->idle.reserve(static_cast<std::size_t>(shape.connections));
    for (int i = 0; i < shape.connections; ++i)
      connections_->idle.push_back(target.connect(connections_->loop));
    sleep_seconds(1);  // what opening them started (a snapshot of the holds, say) settles

    const double idle0 = server_cpu(target);
    sleep_seconds(shape.idle_s);
    result_.idle_cpu_s = server_cpu(target) - idle0;

    connections_->client = target.connect(connections_->loop);
    connections_->client->set_listener(&connections_->reply);
  } catch (const std::exception& e) {
    result_.failed = true;
    result_.failure = e.what();
  }
}

QuietServer::~QuietServer() = default;

void QuietServer::paced_window(double seconds) {
  if (result_.failed || !connections_) return;
  try {
    LockClient& client = *connections_->client;
    Connections::OneReply& reply = connections_->reply;
    const auto period = std::chrono::milliseconds(result_.shape.period_ms);
    const double cpu0 = server_cpu(target_);
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    for (auto next = start; next < end && !interrupted(); next += period) {
      std::this_thread::sleep_until(next);
      client.try_acquire(kPacedLock, 10'000, 0);  // sent by wait()'s first turn of the loop
      if (reply.wait(connections_->loop, "try-acquire") != OpStatus::kGranted)
        throw std::runtime_error("the paced lock was found held");
      client.release(kPacedLock, reply.handle, 0);
      if (reply.wait(connections_->loop, "release") != OpStatus::kReleased)
        throw std::runtime_error("the paced release was answered not-held");
      ++result_.paced_pairs;
    }
    std::this_thread::sleep_until(end);
    result_.paced_window_cpu_s.push_back(server_cpu(target_) - cpu0);
  } catch (const std::exception& e) {
    result_.failed = true;
    result_.failure = e.what();
  }
}

std::optional<RatioRange> paced_ratio_range(const IdleResult& a, const IdleResult& b) {
  return ratio_range(a.paced_window_cpu_s, b.paced_window_cpu_s);
}

}  // namespace holdfast::bench
