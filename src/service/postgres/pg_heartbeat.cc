#include "service/postgres/pg_heartbeat.h"

#include <spdlog/spdlog.h>

namespace holdfast::pg {

Heartbeat::Heartbeat(ClusterRows& rows, std::int64_t node_id, std::string name, Millis every_ms,
                     Millis gap_ms)
    : rows_(rows),
      node_id_(node_id),
      name_(std::move(name)),
      every_ms_(every_ms),
      gap_ms_(gap_ms) {}

Heartbeat::~Heartbeat() { stop(); }

void Heartbeat::start() {
  thread_ = std::thread([this] { run(); });
}

void Heartbeat::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status Heartbeat::beat() {
  auto recreated = rows_.heartbeat(node_id_, name_, gap_ms_);
  const auto now = std::chrono::steady_clock::now();
  if (!recreated.ok()) {
    if (!failing_since_) {
      failing_since_ = now;
      spdlog::warn("heartbeat: {}; retrying every {} ms", recreated.error().message, every_ms_);
    }
    return std::move(recreated).error();
  }
  if (failing_since_) {
    spdlog::info(
        "heartbeat: the database answers again after {} ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *failing_since_).count());
    failing_since_.reset();
  }
  if (*recreated) {
    spdlog::warn(
        "this node's heartbeat row was gone: it was presumed dead (cut off from the database "
        "for longer than the session grace while other nodes were not), and its session holds "
        "older than the grace were freed");
  }
  return ok_status();
}

void Heartbeat::run() {
  auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(every_ms_);
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_until(lock, next, [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    // From the start of this beat: a slow statement does not stretch the interval.
    next = std::chrono::steady_clock::now() + std::chrono::milliseconds(every_ms_);
    (void)beat();
    lock.lock();
  }
}

}  // namespace holdfast::pg
