// The lock table's durable state: loading it after a restart (restore) and handing it to a
// snapshot (snapshot, for_each_durable_hold). Only lease-scoped holds whose lease has not ended
// are durable; session holds never survive a restart, though their tokens count.
#include <algorithm>

#include "core/lock_table.h"
#include "core/lock_table_entry.h"

namespace holdfast {

void LockTable::restore(const DurableState& state, Millis now) {
  last_token_ = state.last_token;
  if (state.grants_closed_until > now) grants_closed_until_ = state.grants_closed_until;
  keys_.reserve(keys_.size() + state.holds.size());  // one growth, not twenty rehashes
  for (const HoldState& h : state.holds) {
    last_token_ = std::max(last_token_, h.token);
    if (h.scope == Scope::kSession) continue;
    if (h.lease_expires_at <= now) {
      // A lease that ended by expiry (a released hold has no record left) with a lock-delay
      // still running closes its key until the same instant as before the restart.
      if (h.lock_delay_ms > 0 && h.lease_expires_at + h.lock_delay_ms > now)
        close_after_end(&slot_for(h.key), h.lease_expires_at, h.lock_delay_ms, h.token, h.held_by,
                        /*durable=*/true, now);
      continue;
    }
    if (h.mode != LockMode::kExclusive) {
      restore_member(h);
      continue;
    }
    Slot* slot = &slot_for(h.key);
    Entry& e = slot->second;
    if (e.group() != nullptr) continue;  // a key is a lock or a semaphore, never both
    if (e.held()) drop_hold(slot);       // a later record for the same key wins
    e.handle = h.handle;
    e.token = h.token;
    e.acquired_at = h.acquired_at;
    e.lease_expires_at = h.lease_expires_at;
    e.held_by = intern(h.held_by);
    if (!h.owner.empty() || !h.holder_id.empty() || h.lock_delay_ms > 0) {
      e.extras =
          std::make_unique<Extras>(Extras{h.owner, h.holder_id, 0, nullptr, h.lock_delay_ms});
    }
    e.scope = Scope::kLease;
    e.kind = h.kind;
    if (h.lease_expires_at != kNever) lease_ends_.set(slot, h.lease_expires_at);
    ++held_count_;
  }
  restore_multis();
}

DurableState LockTable::snapshot(Millis now) const {
  DurableState state;
  state.last_token = last_token_;
  state.holds.reserve(held_count_);
  for_each_durable_hold(now, [&](const HoldView& hold) { state.holds.push_back(state_of(hold)); });
  return state;
}

void LockTable::for_each_durable_hold(Millis now,
                                      const std::function<void(const HoldView&)>& fn) const {
  for (const auto& slot : keys_) {
    const Entry& e = slot.second;
    if (e.group() != nullptr) {
      for (const auto& m : e.group()->members) {
        if (m->session != 0 || m->lease_expires_at <= now) continue;
        fn(HoldView{slot.first,
                    m->handle,
                    m->token,
                    m->held_by,
                    m->owner ? std::string_view(*m->owner) : std::string_view(),
                    {},
                    m->acquired_at,
                    m->lease_expires_at,
                    Scope::kLease,
                    HoldKind::kHandle,
                    e.group()->mode,
                    e.group()->permits,
                    m->take,
                    m->lock_delay_ms});
      }
    }
    if (!e.held() || e.scope == Scope::kSession || e.lease_expires_at <= now) continue;
    fn(HoldView{slot.first, e.handle, e.token, e.held_by->first, e.owner(), e.holder_id(),
                e.acquired_at, e.lease_expires_at, e.scope, e.kind, LockMode::kExclusive, 0, 0,
                e.lock_delay()});
  }
  for_each_durable_delay(fn);
}

void LockTable::restore_member(const HoldState& h) {
  Slot* slot = &slot_for(h.key);
  Entry& e = slot->second;
  if (e.held()) return;  // a lock and a semaphore never share a key; keep the first seen
  if (e.group() != nullptr && (e.group()->mode != h.mode || e.group()->permits != h.permits))
    return;
  if (e.group() == nullptr) start_group(e, h.mode, h.permits);
  auto m = std::make_unique<Member>();
  m->slot = slot;
  m->handle = h.handle;
  m->token = h.token;
  m->acquired_at = h.acquired_at;
  m->lease_expires_at = h.lease_expires_at;
  m->held_by = h.held_by;
  if (!h.owner.empty()) m->owner = h.owner;
  m->take = h.mode == LockMode::kSemaphore ? h.take : 1;
  m->lock_delay_ms = h.lock_delay_ms;
  if (h.mode == LockMode::kSemaphore) e.group()->used += m->take;
  if (h.lease_expires_at != kNever) member_ends_.set(m.get(), h.lease_expires_at);
  ++held_count_;
  count_member(h.mode, m->take, +1);
  e.group()->members.push_back(std::move(m));
}

}  // namespace holdfast
