// Shared and semaphore holds of the lock table (docs/lock-kinds.md).
//
// A key is a lock or a semaphore for as long as it has holds or waiters:
//  1. A lock key has one exclusive hold (the Entry's own, handled in lock_table.cc exactly as
//     before these modes existed) or any number of shared holds (a Group of mode kShared).
//  2. A semaphore key has a Group of mode kSemaphore of `permits` permits, whose holds take
//     1..permits of them each; the takes never add up to more than the permits. The permits are
//     fixed by the first acquire and forgotten when the key has neither holds nor waiters; a
//     request with another number of permits, or
//     a lock request on a semaphore key (and the reverse), is INVALID_ARGUMENT.
//  3. One FIFO queue per key serves every mode. A new request is granted at once only when it
//     fits and nobody waits (no barging); hand_off() grants waiters from the head while the
//     head fits, so consecutive shared waiters are granted together and a waiting exclusive
//     request stops every shared request behind it (no writer starvation).
//  4. Every hold has its own handle and token. A re-take by the same principal and non-empty
//     owner replaces that principal's hold of the same mode (and, for a semaphore, only when
//     the new permits fit in place of the old): the old handle is fenced.
//  5. Each hold's lease ends on its own (member_ends_); the key's entry is erased when the
//     last hold and waiter are gone.
#include <algorithm>

#include "core/kind_conflict.h"
#include "core/lock_table.h"
#include "core/lock_table_entry.h"

namespace holdfast {

void LockTable::start_group(Entry& e, LockMode mode, std::uint32_t permits) {
  if (e.extras == nullptr) e.extras = std::make_unique<Extras>();
  e.extras->group = std::make_unique<Group>();
  e.extras->group->mode = mode;
  e.extras->group->permits = mode == LockMode::kSemaphore ? permits : 0;
}

std::optional<Error> LockTable::kind_conflict(const Slot& slot, LockMode mode,
                                              std::uint32_t permits) const {
  const Entry& e = slot.second;
  // The key's current kind: 0 for a lock, the permits of a semaphore, nullopt when unused.
  std::optional<std::uint32_t> current;
  if (e.group() != nullptr) {
    current = e.group()->mode == LockMode::kSemaphore ? e.group()->permits : 0;
  } else if (e.held()) {
    current = 0;
  } else if (e.queue != nullptr) {
    current = e.queue->semaphore_permits;
  }
  const std::uint32_t wanted = mode == LockMode::kSemaphore ? permits : 0;
  if (!current || *current == wanted) return std::nullopt;
  return kind_conflict_error(slot.first, *current, wanted);
}

bool LockTable::fits(const Entry& e, LockMode mode, std::uint32_t take) {
  switch (mode) {
    case LockMode::kExclusive:
      return !e.busy();
    case LockMode::kShared:
      return !e.held() && (e.group() == nullptr || e.group()->mode == LockMode::kShared);
    case LockMode::kSemaphore:
      return e.group() == nullptr || (e.group()->mode == LockMode::kSemaphore &&
                                      e.group()->used + take <= e.group()->permits);
  }
  return false;
}

bool LockTable::can_grant(const Entry& e, const Waiter& w) const { return fits(e, w.mode, w.take); }

HoldState LockTable::member_view(const Slot& slot, const Member& m, bool with_handle) const {
  HoldState h;
  h.key = slot.first;
  if (with_handle) h.handle = m.handle;
  h.token = m.token;
  h.held_by = m.held_by;
  h.owner = m.owner.value_or(std::string());
  h.acquired_at = m.acquired_at;
  h.lease_expires_at = m.lease_expires_at;
  h.scope = m.session != 0 ? Scope::kSession : Scope::kLease;
  h.kind = HoldKind::kHandle;
  h.mode = slot.second.group()->mode;
  h.take = h.mode == LockMode::kSemaphore ? m.take : 0;
  h.permits = slot.second.group()->permits;
  h.lock_delay_ms = m.lock_delay_ms;
  return h;
}

HoldState LockTable::grant_member(Slot* slot, const Waiter& w, Millis lease_expires_at,
                                  Millis now) {
  Member* m = place_member(slot, w, lease_expires_at, now, handles_.next(), nullptr);
  Granted granted{member_view(*slot, *m, /*with_handle=*/true)};
  emit(granted);
  return std::move(granted.hold);
}

LockTable::Member* LockTable::place_member(Slot* slot, const Waiter& w, Millis lease_expires_at,
                                           Millis now, const Handle& handle, MultiHold* multi) {
  Entry& e = slot->second;
  if (e.group() == nullptr) start_group(e, w.mode, w.permits);
  auto m = std::make_unique<Member>();
  m->slot = slot;
  m->handle = handle;
  m->multi = multi;
  m->token = ++last_token_;
  m->acquired_at = now;
  m->lease_expires_at = lease_expires_at;
  m->held_by = w.held_by;
  m->owner = w.owner;
  m->session = w.session_scoped ? w.session : 0;
  m->take = w.mode == LockMode::kSemaphore ? w.take : 1;
  m->lock_delay_ms = w.lock_delay_ms;
  if (w.mode == LockMode::kSemaphore) e.group()->used += m->take;
  if (m->session != 0 && multi == nullptr) sessions_[m->session].members.push_back(m.get());
  if (lease_expires_at != kNever) member_ends_.set(m.get(), lease_expires_at);
  ++held_count_;
  count_member(w.mode, m->take, +1);
  ++counters_.grants;
  Member* placed = m.get();
  e.group()->members.push_back(std::move(m));
  return placed;
}

LockTable::Member* LockTable::find_member(Slot* slot, std::string_view handle) {
  if (slot->second.group() == nullptr) return nullptr;
  auto parsed = Handle::parse(handle);
  if (!parsed) return nullptr;
  for (auto& m : slot->second.group()->members)
    if (m->handle == *parsed) return m.get();
  return nullptr;
}

void LockTable::drop_member(Member* m) {
  Slot* slot = m->slot;
  Entry& e = slot->second;
  member_ends_.remove(m);
  if (m->session != 0) {
    auto it = sessions_.find(m->session);
    if (it != sessions_.end()) {
      erase_unordered(it->second.members, m);
      if (it->second.empty()) sessions_.erase(it);
    }
  }
  if (e.group()->mode == LockMode::kSemaphore) e.group()->used -= m->take;
  --held_count_;
  count_member(e.group()->mode, m->take, -1);
  auto& members = e.group()->members;
  members.erase(std::find_if(members.begin(), members.end(),
                             [m](const std::unique_ptr<Member>& p) { return p.get() == m; }));
  if (members.empty()) e.extras.reset();  // a group is all its extras hold
}

void LockTable::release_member(Member* m, Millis now) {
  Slot* slot = m->slot;
  emit(Released{slot->first, m->token}, slot);
  ++counters_.releases;
  drop_member(m);
  hand_off(slot, now);
}

void LockTable::release_group(Slot* slot, Millis now) {
  while (slot->second.group() != nullptr) {
    Member* m = slot->second.group()->members.front().get();
    emit(Released{slot->first, m->token}, slot);
    ++counters_.releases;
    drop_member(m);
  }
  hand_off(slot, now);
}

void LockTable::count_member(LockMode mode, std::uint32_t take, int sign) {
  std::size_t& holds = mode == LockMode::kShared ? held_kinds_.shared : held_kinds_.semaphore;
  const std::uint64_t taken = mode == LockMode::kSemaphore ? take : 0;
  if (sign > 0) {
    ++holds;
    held_kinds_.permits_taken += taken;
  } else {
    --holds;
    held_kinds_.permits_taken -= taken;
  }
}

void LockTable::after_waiter_left(Slot* slot, Millis now) {
  // A waiter that did not fit may have kept fitting ones behind it waiting; on a free key,
  // a multi-key waiter (waiting for its other keys) may have kept anyone behind it waiting.
  hand_off(slot, now);
}

void LockTable::expire_due_members(Slot* slot, Millis now) {
  bool ended = false;
  while (slot->second.group() != nullptr) {
    auto& members = slot->second.group()->members;
    auto due = std::find_if(members.begin(), members.end(),
                            [now](const auto& m) { return m->lease_expires_at <= now; });
    if (due == members.end()) break;
    ended = true;
    if (MultiHold* g = (*due)->multi) {  // a group's lease ends for all its keys
      end_multi(g, /*expired=*/true);
      continue;
    }
    ++counters_.expiries;
    const Member& m = **due;
    if (events_ != nullptr) report_member(LockEventKind::kExpired, *slot, m);
    close_after_end(slot, m.lease_expires_at, m.lock_delay_ms, m.token, m.held_by,
                    /*durable=*/m.session == 0, now);
    drop_member(due->get());
  }
  if (ended) hand_off(slot, now);
}

StatusView LockTable::group_status(const Slot& slot, StatusView s) const {
  const Group& g = *slot.second.group();
  s.held = true;
  s.mode = g.mode;
  for (const auto& m : g.members) s.holders.push_back(member_view(slot, *m, false));
  s.hold = s.holders.back();
  if (g.mode == LockMode::kSemaphore) {
    s.permits = g.permits;
    s.free_permits = g.permits - g.used;
  }
  return s;
}

Result<AcquireOutcome> LockTable::acquire_shared(const AcquireRequest& r, Millis now) {
  if (r.mode == LockMode::kSemaphore && (r.permits == 0 || r.take == 0 || r.take > r.permits))
    return invalid_argument("a semaphore grant takes 1 to " + std::to_string(r.permits) +
                            " permits, not " + std::to_string(r.take))
        .with("key", std::string(r.key));
  const bool all_open = granting(now);
  Slot* slot = live_or_new(r.key, now);
  if (auto conflict = kind_conflict(*slot, r.mode, r.permits)) {
    maybe_erase(slot);
    return *conflict;
  }
  const bool open = all_open && delay_until(slot, now) == 0;
  Entry& e = slot->second;
  Waiter as_waiter;  // the request in the shape hand_off() grants
  as_waiter.session = r.session;
  as_waiter.session_scoped = r.session_scoped;
  as_waiter.held_by = std::string(r.held_by);
  if (r.owner) as_waiter.owner = std::string(*r.owner);
  as_waiter.mode = r.mode;
  as_waiter.take = r.mode == LockMode::kSemaphore ? r.take : 1;
  as_waiter.permits = r.permits;
  as_waiter.lock_delay_ms = r.lock_delay_ms.value_or(0);
  AcquireOutcome out;
  // Re-take: this principal's hold of the same mode and owner is replaced (its handle fenced),
  // ahead of any waiter, since it adds no holder (and, for a semaphore, only if it fits).
  if (open && !r.no_retake && r.owner && !r.owner->empty() && e.group() != nullptr &&
      e.group()->mode == r.mode) {
    for (auto& m : e.group()->members) {
      if (m->multi != nullptr || m->held_by != r.held_by || m->owner != *r.owner) continue;
      if (r.mode == LockMode::kSemaphore &&
          e.group()->used - m->take + as_waiter.take > e.group()->permits)
        break;
      emit(Released{slot->first, m->token}, slot);
      drop_member(m.get());
      out.kind = AcquireOutcome::Kind::kGranted;
      out.hold = grant_member(slot, as_waiter, now + r.ttl_ms, now);
      // A semaphore re-take for fewer permits than before frees some for the waiters.
      if (r.mode == LockMode::kSemaphore) hand_off(slot, now);
      return out;
    }
  }
  if (open && e.waiter_count() == 0 && fits(e, r.mode, as_waiter.take)) {
    out.kind = AcquireOutcome::Kind::kGranted;
    out.hold = grant_member(slot, as_waiter, now + r.ttl_ms, now);
    return out;
  }
  if (r.timeout_ms == 0) {
    maybe_erase(slot);
    out.kind = AcquireOutcome::Kind::kContended;
    return out;
  }
  out.kind = AcquireOutcome::Kind::kQueued;
  out.waiter = enqueue(slot, r, /*assign=*/false, {}, r.ttl_ms, r.timeout_ms, now);
  return out;
}

}  // namespace holdfast
