// The local per-key FIFO (see key_queue.h).
//
// One mutex guards every entry: each critical section is a few pointer moves, far shorter than
// any server round trip, so a finer scheme would buy nothing. Each entry has its own condition
// variable, so a release wakes only the callers of that key.
#include "client/key_queue.h"

#include <algorithm>

namespace holdfast::inline v0::client_internal {

KeyQueue::Turn::~Turn() {
  if (queue_ != nullptr) queue_->finish_turn(key_);
}

KeyQueue::InFlight::~InFlight() {
  if (queue_ != nullptr) queue_->finish_in_flight(key_);
}

std::optional<KeyQueue::Turn> KeyQueue::wait_turn(const std::string& key,
                                                  std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  auto it = entries_.try_emplace(key, std::make_unique<Entry>()).first;
  Entry& e = *it->second;
  if (!e.taken && e.line.empty()) {
    e.taken = true;
    return Turn(this, key);
  }
  const std::uint64_t ticket = next_ticket_++;
  auto me = e.line.insert(e.line.end(), ticket);
  ++waiting_;
  const bool won =
      e.changed.wait_until(lock, deadline, [&] { return !e.taken && e.line.front() == ticket; });
  --waiting_;
  e.line.erase(me);
  if (!won) {
    // Leaving may make someone else first in line while the turn is free.
    e.changed.notify_all();
    erase_if_unused(it);
    return std::nullopt;
  }
  e.taken = true;
  return Turn(this, key);
}

std::optional<KeyQueue::Turn> KeyQueue::try_turn(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.try_emplace(key, std::make_unique<Entry>()).first;
  Entry& e = *it->second;
  if (e.taken || !e.line.empty()) return std::nullopt;
  e.taken = true;
  return Turn(this, key);
}

KeyQueue::InFlight KeyQueue::in_flight(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.try_emplace(key, std::make_unique<Entry>()).first;
  max_in_flight_ = std::max(max_in_flight_, ++it->second->in_flight);
  return InFlight(this, key);
}

void KeyQueue::finish_turn(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  it->second->taken = false;
  it->second->changed.notify_all();
  erase_if_unused(it);
}

void KeyQueue::finish_in_flight(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  --it->second->in_flight;
  erase_if_unused(it);
}

void KeyQueue::erase_if_unused(std::map<std::string, std::unique_ptr<Entry>>::iterator it) {
  const Entry& e = *it->second;
  if (!e.taken && e.line.empty() && e.in_flight == 0) entries_.erase(it);
}

std::size_t KeyQueue::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

std::size_t KeyQueue::max_in_flight_per_key() const {
  std::lock_guard lock(mu_);
  return max_in_flight_;
}

}  // namespace holdfast::inline v0::client_internal
