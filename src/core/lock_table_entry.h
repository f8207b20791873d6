// The lock table's per-key records, shared by the files that implement LockTable
// (lock_table.cc: exclusive holds and the queue; lock_table_groups.cc: shared and semaphore
// holds; lock_table_durable.cc: restore and snapshots). Private to those files.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lock_table.h"

namespace holdfast {

// Debian's Abseil has its own string_view type; the table's maps look keys up by that.
inline absl::string_view absl_view(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// Removes `item` from a vector whose order does not matter: the last element takes its place.
template <typename T>
void erase_unordered(std::vector<T>& v, const T& item) {
  auto pos = std::find(v.begin(), v.end(), item);
  if (pos == v.end()) return;
  *pos = v.back();
  v.pop_back();
}

// A key's FIFO queue of waiters; allocated only while it has any.
struct LockTable::WaiterQueue {
  Waiter* head = nullptr;
  Waiter* tail = nullptr;
  std::uint32_t size = 0;
  std::uint32_t semaphore_permits = 0;  // the permits its semaphore waiters agree on; 0: a lock
};

// One shared or semaphore hold. Owned by its key's Group; its address is stable, so the lease
// heap and the session index point at it.
struct LockTable::Member {
  Slot* slot = nullptr;
  Handle handle;
  std::uint64_t token = 0;
  Millis acquired_at = 0;
  Millis lease_expires_at = kNever;
  std::string held_by;
  std::optional<std::string> owner;
  SessionId session = 0;  // non-zero: session-scoped
  std::uint32_t take = 1;
  std::uint32_t heap_index = kNotInHeap;  // position in member_ends_
  Millis lock_delay_ms = 0;
  MultiHold* multi = nullptr;  // the multi-key group it belongs to, if any
};

// A multi-key group (lock_table_multi.cc): one hold on each of its keys, all with its handle.
// Its holds end together: a release, renewal, lease end or session end of one is of all.
struct LockTable::MultiHold {
  Handle handle;
  std::vector<std::string> keys;                          // sorted
  std::vector<std::pair<LockMode, std::uint32_t>> shape;  // per key: mode and take
  std::string held_by;
  std::optional<std::string> owner;
  SessionId session = 0;  // non-zero: session-scoped
};

// A multi-key request waiting in the queue of each of its keys: one Waiter (a leg) per key.
struct LockTable::MultiWait {
  WaiterId id = 0;            // the id the caller knows: its first leg's
  std::vector<Waiter*> legs;  // in key order
};

// The holds of a key held in shared or semaphore mode, oldest first. Exists only while the key
// has at least one; an exclusive hold never lives here (it is the Entry's own hold).
struct LockTable::Group {
  LockMode mode = LockMode::kShared;
  std::uint32_t permits = 0;  // semaphore: the key's permits
  std::uint32_t used = 0;     // semaphore: the permits held
  std::vector<std::unique_ptr<Member>> members;
};

// Rarely-set parts of a key live out of line, so a plain hold costs one null pointer: of an
// exclusive hold, its owner, holder id and session; of a shared or semaphore key, its Group
// (which has no exclusive hold, so the two uses never meet).
struct LockTable::Extras {
  std::string owner;      // empty: none
  std::string holder_id;  // assigned holds
  SessionId session = 0;  // session-scoped holds
  std::unique_ptr<Group> group;
  Millis lock_delay_ms = 0;    // an exclusive hold's lock-delay
  MultiHold* multi = nullptr;  // an exclusive hold of a multi-key group
};

// One key: its exclusive hold (if held_by != nullptr) or its shared or semaphore holds (if
// group() != nullptr), and its waiters. Kept small: this is most of the memory per held key
// (72 bytes here, plus the key string and the hash node).
struct LockTable::Entry {
  Handle handle;
  std::uint64_t token = 0;
  Millis acquired_at = 0;
  Millis lease_expires_at = kNever;
  std::pair<const std::string, std::uint32_t>* held_by = nullptr;  // interned; null when free
  std::unique_ptr<Extras> extras;
  std::unique_ptr<WaiterQueue> queue;
  std::uint32_t heap_index = kNotInHeap;  // position in lease_ends_
  Scope scope = Scope::kLease;
  HoldKind kind = HoldKind::kHandle;

  bool held() const { return held_by != nullptr; }  // an exclusive hold
  Group* group() const { return extras ? extras->group.get() : nullptr; }
  bool busy() const { return held_by != nullptr || group() != nullptr; }
  std::uint32_t waiter_count() const { return queue ? queue->size : 0; }
  SessionId session() const { return extras ? extras->session : 0; }
  std::string_view owner() const {
    return extras ? std::string_view(extras->owner) : std::string_view();
  }
  std::string_view holder_id() const {
    return extras ? std::string_view(extras->holder_id) : std::string_view();
  }
  Millis lock_delay() const { return extras ? extras->lock_delay_ms : 0; }
  MultiHold* multi() const { return extras ? extras->multi : nullptr; }
};

// A key closed by a lock-delay: no grant on it before `until`. Lives in LockTable::delays_
// while it runs, which keeps the key's entry (so status can tell it).
struct LockTable::KeyDelay {
  Slot* slot = nullptr;
  Millis until = 0;
  // The hold whose end started it, as a snapshot writes it down (docs/wal-format.md).
  Millis ended_at = 0;
  Millis delay_ms = 0;
  std::uint64_t token = 0;
  std::string held_by;
  bool durable = false;
  std::uint32_t heap_index = kNotInHeap;  // position in delay_ends_
};

struct LockTable::Waiter {
  WaiterId id = 0;
  Slot* slot = nullptr;
  SessionId session = 0;
  Millis deadline = 0;
  Millis timeout_ms = 0;
  std::optional<Millis> ttl_ms;  // none: an assign without TTL
  bool assign = false;
  bool session_scoped = false;
  std::optional<std::string> owner;
  std::string holder_id;
  std::string held_by;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0;  // kSemaphore: the key's permits
  std::uint32_t take = 1;     // kSemaphore: how many of them the waiter asks for
  Millis lock_delay_ms = 0;
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
  std::uint32_t heap_index = kNotInHeap;
  MultiWait* multi = nullptr;  // a leg of a multi-key waiter
};

inline std::uint32_t& LockTable::HoldIndex::operator()(Slot* slot) const {
  return slot->second.heap_index;
}
inline std::uint32_t& LockTable::WaiterIndex::operator()(Waiter* w) const { return w->heap_index; }
inline std::uint32_t& LockTable::MemberIndex::operator()(Member* m) const { return m->heap_index; }
inline std::uint32_t& LockTable::DelayIndex::operator()(KeyDelay* d) const { return d->heap_index; }

}  // namespace holdfast
