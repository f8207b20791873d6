// In-process FIFO lock per name; see local_lock.h for the lifecycle.
#include "local_lock.h"

#include <algorithm>
#include <utility>

#include "holdfast/errors.h"

namespace holdfast::sql {

LocalLockTable::Guard::Guard(Guard&& other) noexcept
    : table_(std::exchange(other.table_, nullptr)), name_(std::move(other.name_)) {}

LocalLockTable::Guard& LocalLockTable::Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    if (table_ != nullptr) table_->release(name_);
    table_ = std::exchange(other.table_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

LocalLockTable::Guard::~Guard() {
  if (table_ != nullptr) table_->release(name_);
}

std::optional<LocalLockTable::Guard> LocalLockTable::acquire(
    std::string_view name, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  // References to map elements survive rehashing (iterators do not), and other names may be
  // added while this caller waits.
  auto& [key, s] = *slots_.try_emplace(std::string(name)).first;
  if (s.held && s.holder == std::this_thread::get_id()) {
    throw InvalidArgumentError("INVALID_ARGUMENT",
                               "advisory lock '" + std::string(name) +
                                   "' is already held by this thread; with_advisory_lock is not "
                                   "reentrant");
  }
  ++s.users;
  if (!s.held) {
    s.held = true;
    s.holder = std::this_thread::get_id();
    return Guard(this, key);
  }
  Waiter me;
  s.queue.push_back(&me);
  while (!me.granted) {
    if (me.wake.wait_until(lock, deadline) == std::cv_status::timeout && !me.granted) {
      s.queue.erase(std::find(s.queue.begin(), s.queue.end(), &me));
      leave(key);
      return std::nullopt;
    }
  }
  // release() handed the slot over while keeping it held; record who holds it now.
  s.holder = std::this_thread::get_id();
  return Guard(this, key);
}

void LocalLockTable::release(const std::string& name) {
  std::lock_guard lock(mu_);
  Slot& s = slots_.find(name)->second;
  if (s.queue.empty()) {
    s.held = false;
    s.holder = {};
  } else {
    // Hand over directly: the slot stays held, so nobody can barge in between.
    Waiter* next = s.queue.front();
    s.queue.pop_front();
    next->granted = true;
    s.holder = {};  // the waiter records its own thread id once it runs
    next->wake.notify_one();
  }
  leave(name);
}

void LocalLockTable::leave(const std::string& name) {
  auto slot = slots_.find(name);
  if (--slot->second.users == 0) slots_.erase(slot);
}

std::size_t LocalLockTable::waiters(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto slot = slots_.find(std::string(name));
  return slot == slots_.end() ? 0 : slot->second.queue.size();
}

LocalLockTable& LocalLockTable::process_wide() {
  static auto* table = new LocalLockTable();
  return *table;
}

}  // namespace holdfast::sql
