// The in-process level of the two-level advisory lock.
//
// Callers in one process that want the same name queue here before they go to the database,
// so a process has at most one session per name waiting at (or holding) the database lock, and
// same-process callers are served first in, first out rather than in whatever order the
// database happens to wake them.
//
// Lifecycle of a name:
//   1. acquire() creates the name's slot on first use and counts the caller as a user.
//   2. A free slot is taken at once; otherwise the caller queues a Waiter and sleeps on its
//      own condition variable until release() hands the slot to it or its deadline passes (a
//      timed-out waiter removes itself from the queue).
//   3. release() passes the slot straight to the oldest waiter (no thundering herd, no barging).
//   4. The slot is erased when its last user leaves, so the table holds only names in use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

namespace holdfast::sql {

class LocalLockTable {
 public:
  // Releases the name when destroyed. Move-only.
  class Guard {
   public:
    Guard(Guard&& other) noexcept;
    Guard& operator=(Guard&& other) noexcept;
    Guard(const Guard&) = delete;
    ~Guard();

   private:
    friend class LocalLockTable;
    Guard(LocalLockTable* table, std::string name) : table_(table), name_(std::move(name)) {}
    LocalLockTable* table_;
    std::string name_;
  };

  // Waits until this thread holds `name` in this table, or `deadline` passes (nullopt). Waiters
  // are served in arrival order. Throws holdfast::InvalidArgumentError when the calling thread
  // already holds `name` (it would wait for itself).
  std::optional<Guard> acquire(std::string_view name,
                               std::chrono::steady_clock::time_point deadline);

  // How many callers are queued behind the holder of `name` (for tests and diagnostics).
  std::size_t waiters(std::string_view name) const;

  // The table every with_advisory_lock call of this process shares. Never destroyed, so
  // threads still running at exit do not touch a dead mutex.
  static LocalLockTable& process_wide();

 private:
  struct Waiter {
    std::condition_variable wake;
    bool granted = false;
  };
  struct Slot {
    bool held = false;
    std::thread::id holder;
    std::deque<Waiter*> queue;
    std::size_t users = 0;  // the holder plus queued waiters
  };

  void release(const std::string& name);
  // Drops one user of the slot; erases it with its last user. REQUIRES: mu_ held.
  void leave(const std::string& name);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Slot> slots_;
};

}  // namespace holdfast::sql
