#include "service/postgres/pg_housekeeper.h"

#include <spdlog/spdlog.h>

namespace holdfast {

PgHousekeeper::PgHousekeeper(pg::HoldRows& holds, pg::ClusterRows& cluster,
                             HousekeeperOptions options, HousekeeperHooks hooks)
    : holds_(holds), cluster_(cluster), options_(std::move(options)), hooks_(std::move(hooks)) {}

PgHousekeeper::~PgHousekeeper() { stop(); }

void PgHousekeeper::start() {
  thread_ = std::thread([this] { run(); });
}

void PgHousekeeper::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PgHousekeeper::defer(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_all();
}

void PgHousekeeper::run() {
  using Clock = std::chrono::steady_clock;
  auto next_tick = Clock::now() + std::chrono::milliseconds(options_.tick_ms);
  auto next_sweep = Clock::now() + std::chrono::milliseconds(options_.sweep_ms);
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_until(lock, next_tick, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;
    auto jobs = std::move(jobs_);
    jobs_.clear();
    lock.unlock();
    for (auto& job : jobs) job();
    if (Clock::now() >= next_tick) {
      next_tick = Clock::now() + std::chrono::milliseconds(options_.tick_ms);
      const bool sweep = Clock::now() >= next_sweep;
      if (sweep) next_sweep = Clock::now() + std::chrono::milliseconds(options_.sweep_ms);
      tick(sweep);
    }
    lock.lock();
  }
}

void PgHousekeeper::tick(bool sweep) {
  // First: it decides whether this node may write at all (the replication check), so a node
  // refusing changes finds out here when it may take them again.
  if (sweep && hooks_.every_sweep) hooks_.every_sweep();
  // A silent node's row goes before its session holds do, so a node whose holds were freed
  // finds its row gone at its next heartbeat (and says so) however soon it resumes.
  if (auto st =
          cluster_.forget_dead_nodes(options_.node_id, options_.session_grace_ms, options_.gap_ms);
      !st.ok()) {
    if (!failing_) spdlog::warn("housekeeping: {}; retrying every tick", st.error().message);
    failing_ = true;
    return;  // the database is away; every later step would fail the same way
  }
  if (failing_) spdlog::info("housekeeping: the database answers again");
  failing_ = false;
  auto freed =
      holds_.free_dead_sessions(options_.node_id, options_.session_grace_ms, options_.gap_ms);
  if (freed.ok()) {
    if (!freed->empty()) {
      spdlog::info("freed {} session holds of nodes silent for over {} ms", freed->size(),
                   options_.session_grace_ms);
      hooks_.keys_freed(*freed);
    }
    if (auto st = holds_.forget_waits(std::nullopt); !st.ok())
      spdlog::warn("forgetting dead nodes' waits: {}", st.error().message);
  } else {
    spdlog::warn("freeing dead nodes' session holds: {}", freed.error().message);
  }
  if (auto version = cluster_.rule_set_version(); version.ok()) {
    hooks_.rules_version(*version);
  } else {
    spdlog::warn("rule set version: {}", version.error().message);
  }
  if (!sweep) return;
  if (auto swept = holds_.sweep_free(); !swept.ok())
    spdlog::warn("sweeping free rows: {}", swept.error().message);
  if (auto held = holds_.count_live(); held.ok()) hooks_.held_count(*held);
  if (auto st = cluster_.trim_rate_windows(); !st.ok())
    spdlog::warn("trimming rate windows: {}", st.error().message);
}

}  // namespace holdfast
