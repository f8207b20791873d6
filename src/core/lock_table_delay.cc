// Lock-delay (docs/lock-kinds.md, "Lock-delay"): after a hold that asked for one vanishes
// without a release (its lease expired, or its session ended), its key grants nothing until
// the end instant plus the delay, so a holder that lost its lease has time to notice before
// the next one starts. Like the horizon quarantine, but for one key: waiters stay queued and
// are handed the key in order when the delay ends; a try meanwhile is contended.
#include "core/lock_table.h"
#include "core/lock_table_entry.h"

namespace holdfast {

void LockTable::close_after_end(Slot* slot, Millis ended_at, Millis delay_ms, std::uint64_t token,
                                std::string_view held_by, bool durable, Millis now) {
  if (delay_ms <= 0 || ended_at + delay_ms <= now) return;
  const Millis until = ended_at + delay_ms;
  auto& d = delays_[slot];
  if (d == nullptr) {
    d = std::make_unique<KeyDelay>();
  } else if (d->until >= until) {
    return;  // a longer delay already runs (several shared holds ended)
  }
  d->slot = slot;
  d->until = until;
  d->ended_at = ended_at;
  d->delay_ms = delay_ms;
  d->token = token;
  d->held_by = std::string(held_by);
  d->durable = durable;
  delay_ends_.set(d.get(), until);
}

Millis LockTable::delay_until(const Slot* slot, Millis now) const {
  if (delays_.empty()) return 0;
  auto it = delays_.find(slot);
  if (it == delays_.end() || it->second->until <= now) return 0;
  return it->second->until;
}

void LockTable::lift_due_delays(Millis now) {
  while (!delay_ends_.empty() && delay_ends_.top_deadline() <= now) {
    KeyDelay* d = delay_ends_.top();
    Slot* slot = d->slot;
    delay_ends_.remove(d);
    delays_.erase(slot);
    hand_off(slot, now);  // the waiters in order; erases the entry if nobody is left
  }
}

// A snapshot keeps a running delay as the record of the hold that started it: a hold whose
// lease ended at ended_at, with its delay. Restore re-derives the delay from it, as it does
// from the hold's own Granted record in the log. Independent of the clock (see
// EmbeddedBackend's state source): a delay is written until it is lifted.
void LockTable::for_each_durable_delay(const std::function<void(const HoldView&)>& fn) const {
  for (const auto& [slot, d] : delays_) {
    if (!d->durable) continue;
    HoldView v;
    v.key = slot->first;
    v.token = d->token;
    v.held_by = d->held_by;
    v.acquired_at = d->ended_at;
    v.lease_expires_at = d->ended_at;
    v.lock_delay_ms = d->delay_ms;
    fn(v);
  }
}

}  // namespace holdfast
