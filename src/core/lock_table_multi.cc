// Multi-key groups of the lock table (docs/lock-kinds.md, "Several keys at once").
//
//  1. acquire_all() asks for several keys, each in its own mode, at once. It is granted at once
//     when every key fits beside its holds and no key has a waiter (no barging). A grant makes
//     one MultiHold: one handle shared by one hold on each key, tokens drawn in key order, and
//     one GroupGranted change, so the log has the whole group or none of it.
//  2. Otherwise (with a timeout) it joins the queue of every key in the same step, as one leg
//     (a Waiter) per key, tied by a MultiWait. hand_off() grants a leg only through
//     grant_multi(), and only when every leg heads its key's queue and fits there; until then
//     the leg stops everyone behind it on its key, like any waiter that does not fit.
//     All legs join at one instant on the one loop thread, so the queues of all keys agree on
//     one order of arrival; the earliest waiter anywhere heads every queue it is in and waits
//     only for holds, which end. Hence no cycle of waiters and no deadlock.
//  3. A group's holds end together: releasing or renewing any key with the group's handle acts
//     on all of them, the first lease end (or the session end) ends all of them, DEL frees the
//     whole group and PEXPIRE moves all its leases. A group is re-taken only by a request of
//     the same principal, the same non-empty owner, the same keys and the same modes.
//  4. Hand-offs that one key's change causes on other keys are queued (defer) and run by the
//     outermost hand-off (drain), so no hand-off erases an entry another is working on.
#include <algorithm>

#include "core/lock_table.h"
#include "core/lock_table_entry.h"

namespace holdfast {

void LockTable::defer(const Slot* slot) { deferred_.emplace_back(slot->first); }

std::string LockTable::handle_key(const Handle& h) {
  return std::string(reinterpret_cast<const char*>(h.bytes.data()), h.bytes.size());
}

LockTable::MultiHold* LockTable::find_multi(std::string_view key, std::string_view handle) {
  if (multis_.empty()) return nullptr;
  auto parsed = Handle::parse(handle);
  if (!parsed) return nullptr;
  auto it = multis_.find(handle_key(*parsed));
  if (it == multis_.end()) return nullptr;
  MultiHold* g = it->second.get();
  return std::find(g->keys.begin(), g->keys.end(), key) != g->keys.end() ? g : nullptr;
}

std::vector<LockTable::MultiHold*> LockTable::multis_on(const Slot& slot) const {
  std::vector<MultiHold*> found;
  if (multis_.empty()) return found;
  const Entry& e = slot.second;
  if (e.multi() != nullptr) found.push_back(e.multi());
  if (e.group() != nullptr)
    for (const auto& m : e.group()->members)
      if (m->multi != nullptr) found.push_back(m->multi);
  return found;
}

void LockTable::end_multi(MultiHold* g, bool expired) {
  for (const std::string& key : g->keys) {
    auto it = keys_.find(absl_view(key));
    if (it == keys_.end()) continue;
    Slot* slot = &*it;
    Entry& e = slot->second;
    bool dropped = false;
    if (e.multi() == g) {
      if (!expired) emit(Released{slot->first, e.token}, slot);
      if (expired && events_ != nullptr) report(hold_event(LockEventKind::kExpired, *slot));
      drop_hold(slot);
      dropped = true;
    } else if (e.group() != nullptr) {
      for (auto& m : e.group()->members) {
        if (m->multi != g) continue;
        if (!expired) emit(Released{slot->first, m->token}, slot);
        if (expired && events_ != nullptr) report_member(LockEventKind::kExpired, *slot, *m);
        drop_member(m.get());
        dropped = true;
        break;
      }
    }
    if (!dropped) continue;
    ++(expired ? counters_.expiries : counters_.releases);
    defer(slot);
  }
  if (g->session != 0) {
    auto s = sessions_.find(g->session);
    if (s != sessions_.end()) {
      erase_unordered(s->second.multis, g);
      if (s->second.empty()) sessions_.erase(s);
    }
  }
  multis_.erase(handle_key(g->handle));
}

void LockTable::renew_multi(MultiHold* g, Millis lease_expires_at) {
  for (const std::string& key : g->keys) {
    auto it = keys_.find(absl_view(key));
    if (it == keys_.end()) continue;
    Slot* slot = &*it;
    Entry& e = slot->second;
    if (e.multi() == g) {
      e.lease_expires_at = lease_expires_at;
      lease_ends_.set(slot, lease_expires_at);
      emit(Renewed{slot->first, e.token, lease_expires_at}, slot);
      ++counters_.renewals;
    } else if (e.group() != nullptr) {
      for (auto& m : e.group()->members) {
        if (m->multi != g) continue;
        m->lease_expires_at = lease_expires_at;
        member_ends_.set(m.get(), lease_expires_at);
        emit(Renewed{slot->first, m->token, lease_expires_at}, slot);
        ++counters_.renewals;
      }
    }
  }
}

GroupHold LockTable::place_group(const std::vector<std::pair<Slot*, const Waiter*>>& parts,
                                 Millis now) {
  auto g = std::make_unique<MultiHold>();
  const Waiter& first = *parts.front().second;
  g->handle = handles_.next();
  g->held_by = first.held_by;
  g->owner = first.owner;
  g->session = first.session_scoped ? first.session : 0;
  const Scope scope = first.session_scoped ? Scope::kSession : Scope::kLease;
  std::optional<std::string_view> owner;
  if (first.owner) owner = *first.owner;
  GroupHold out;
  out.handle = g->handle;
  out.lease_expires_at = now + *first.ttl_ms;
  for (const auto& [slot, w] : parts) {
    g->keys.push_back(slot->first);
    g->shape.emplace_back(w->mode, w->mode == LockMode::kSemaphore ? w->take : 1);
    if (w->mode == LockMode::kExclusive) {
      place_hold(slot, w->held_by, owner, {}, out.lease_expires_at, scope, HoldKind::kHandle,
                 w->session, /*lock_delay_ms=*/0, now, g->handle, g.get());
      out.holds.push_back(view(*slot, /*with_handle=*/true));
    } else {
      Member* m = place_member(slot, *w, out.lease_expires_at, now, g->handle, g.get());
      out.holds.push_back(member_view(*slot, *m, /*with_handle=*/true));
    }
  }
  emit(GroupGranted{out.holds});
  if (g->session != 0) sessions_[g->session].multis.push_back(g.get());
  multis_.emplace(handle_key(g->handle), std::move(g));
  return out;
}

bool LockTable::multi_ready(const MultiWait& mw, Millis now) const {
  for (const Waiter* leg : mw.legs) {
    const Entry& e = leg->slot->second;
    if (delay_until(leg->slot, now) != 0) return false;  // a lock-delay closes that key
    if (e.queue == nullptr || e.queue->head != leg) return false;
    if (!fits(e, leg->mode, leg->take)) return false;
  }
  return true;
}

namespace {

template <typename W>
std::vector<W*> legs_in_key_order(const std::vector<W*>& legs) {
  std::vector<W*> sorted = legs;
  std::sort(sorted.begin(), sorted.end(),
            [](W* a, W* b) { return a->slot->first < b->slot->first; });
  return sorted;
}

}  // namespace

void LockTable::grant_multi(MultiWait& mw, Millis now) {
  const std::vector<Waiter*> legs = legs_in_key_order(mw.legs);
  std::vector<std::pair<Slot*, const Waiter*>> parts;
  parts.reserve(legs.size());
  for (Waiter* leg : legs) parts.emplace_back(leg->slot, leg);
  WaiterOutcome out;
  out.waiter = mw.id;
  out.session = legs.front()->session;
  out.granted = true;
  out.multi = true;
  out.key = legs.front()->slot->first;
  out.timeout_ms = legs.front()->timeout_ms;
  if (events_ != nullptr)
    for (Waiter* leg : legs)
      report_waiter(*leg, LockEventKind::kDequeued, DequeueReason::kGranted, now);
  out.group = place_group(parts, now);
  // The keys' queues lost a waiter that may have kept others behind it waiting.
  for (Waiter* leg : legs) {
    defer(leg->slot);
    unlink_waiter(leg);  // the last one destroys `mw`
  }
  outcomes_.push_back(std::move(out));
}

void LockTable::time_out_multi(MultiWait& mw, Millis now) {
  const std::vector<Waiter*> legs = legs_in_key_order(mw.legs);
  WaiterOutcome out;
  out.waiter = mw.id;
  out.session = legs.front()->session;
  out.multi = true;
  out.key = legs.front()->slot->first;
  out.timeout_ms = legs.front()->timeout_ms;
  ++counters_.timeouts;
  cancel_multi(mw, DequeueReason::kTimeout, now);
  outcomes_.push_back(std::move(out));
}

void LockTable::cancel_multi(MultiWait& mw, DequeueReason reason, Millis now) {
  const std::vector<Waiter*> legs = mw.legs;
  for (Waiter* leg : legs) {
    defer(leg->slot);
    unlink_waiter(leg, reason, now);  // the last one destroys `mw`
  }
}

LockTable::MultiHold* LockTable::retake_candidate(const AcquireAllRequest& r,
                                                  const std::vector<Slot*>& slots) const {
  for (MultiHold* g : multis_on(*slots.front())) {
    if (g->held_by != r.held_by || !g->owner || *g->owner != *r.owner) continue;
    if ((g->session != 0) != r.session_scoped || g->keys.size() != r.keys.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < r.keys.size() && same; ++i) {
      const KeyRequest& k = r.keys[i];
      const std::uint32_t take = k.mode == LockMode::kSemaphore ? k.take : 1;
      same = g->keys[i] == k.key && g->shape[i] == std::pair{k.mode, take};
    }
    if (same) return g;
  }
  return nullptr;
}

Result<AcquireOutcome> LockTable::acquire_all(const AcquireAllRequest& r, Millis now) {
  if (r.keys.empty()) return invalid_argument("a multi-key request needs at least one key");
  for (std::size_t i = 0; i < r.keys.size(); ++i) {
    const KeyRequest& k = r.keys[i];
    if (i > 0 && r.keys[i - 1].key >= k.key)
      return invalid_argument("the keys of a multi-key request must be distinct and sorted")
          .with("key", std::string(k.key));
    if (k.mode == LockMode::kSemaphore && (k.permits == 0 || k.take == 0 || k.take > k.permits))
      return invalid_argument("a semaphore grant takes 1 to " + std::to_string(k.permits) +
                              " permits, not " + std::to_string(k.take))
          .with("key", std::string(k.key));
  }
  const bool open = granting(now);
  // Lease ends due on any of the keys happen first; no entry is held across them.
  for (const KeyRequest& k : r.keys) find_live(k.key, now);
  std::vector<Slot*> slots;
  slots.reserve(r.keys.size());
  for (const KeyRequest& k : r.keys) slots.push_back(&slot_for(k.key));
  auto forget = [&] {
    for (Slot* slot : slots) maybe_erase(slot);
  };
  for (std::size_t i = 0; i < r.keys.size(); ++i) {
    if (auto conflict = kind_conflict(*slots[i], r.keys[i].mode, r.keys[i].permits)) {
      forget();
      return *conflict;
    }
  }
  // Each key in the shape hand_off() grants.
  std::vector<Waiter> asks(r.keys.size());
  std::vector<std::pair<Slot*, const Waiter*>> parts;
  for (std::size_t i = 0; i < r.keys.size(); ++i) {
    Waiter& w = asks[i];
    w.session = r.session;
    w.session_scoped = r.session_scoped;
    w.held_by = std::string(r.held_by);
    if (r.owner) w.owner = std::string(*r.owner);
    w.ttl_ms = r.ttl_ms;
    w.mode = r.keys[i].mode;
    w.take = w.mode == LockMode::kSemaphore ? r.keys[i].take : 1;
    w.permits = r.keys[i].permits;
    parts.emplace_back(slots[i], &w);
  }
  AcquireOutcome out;
  if (open && r.owner && !r.owner->empty()) {
    if (MultiHold* old = retake_candidate(r, slots)) {
      end_multi(old, /*expired=*/false);  // the same holds come back at once, new handle
      out.kind = AcquireOutcome::Kind::kGranted;
      out.group = place_group(parts, now);
      drain(now);
      return out;
    }
  }
  bool all_fit = open;
  for (std::size_t i = 0; i < r.keys.size() && all_fit; ++i) {
    const Entry& e = slots[i]->second;
    all_fit = e.waiter_count() == 0 && delay_until(slots[i], now) == 0 &&
              fits(e, asks[i].mode, asks[i].take);
  }
  if (all_fit) {
    out.kind = AcquireOutcome::Kind::kGranted;
    out.group = place_group(parts, now);
    return out;
  }
  if (r.timeout_ms == 0) {
    forget();
    out.kind = AcquireOutcome::Kind::kContended;
    return out;
  }
  // One leg in every key's queue, all in this one step.
  auto mw = std::make_unique<MultiWait>();
  for (std::size_t i = 0; i < r.keys.size(); ++i) {
    AcquireRequest leg;
    leg.key = r.keys[i].key;
    leg.owner = r.owner;
    leg.session_scoped = r.session_scoped;
    leg.session = r.session;
    leg.held_by = r.held_by;
    leg.mode = r.keys[i].mode;
    leg.take = asks[i].take;
    leg.permits = r.keys[i].permits;
    const WaiterId id = enqueue(slots[i], leg, /*assign=*/false, {}, r.ttl_ms, r.timeout_ms, now);
    Waiter* w = waiters_.at(id).get();
    w->multi = mw.get();
    mw->legs.push_back(w);
    if (i == 0) mw->id = id;
  }
  out.kind = AcquireOutcome::Kind::kQueued;
  out.waiter = mw->id;
  multi_waits_.emplace(mw->id, std::move(mw));
  return out;
}

void LockTable::restore_multis() {
  // A group is the holds that share one handle across keys; nothing else shares a handle.
  // Sorting the handles finds them without a map entry per hold: a restart with a million
  // holds spends tens of milliseconds here, not seconds.
  std::vector<std::pair<Handle, Slot*>> seen;
  seen.reserve(held_count_);
  for (auto& slot : keys_) {
    const Entry& e = slot.second;
    if (e.held() && e.kind == HoldKind::kHandle) seen.emplace_back(e.handle, &slot);
    if (e.group() != nullptr)
      for (const auto& m : e.group()->members) seen.emplace_back(m->handle, &slot);
  }
  std::sort(seen.begin(), seen.end(),
            [](const auto& a, const auto& b) { return a.first.bytes < b.first.bytes; });
  std::vector<Slot*> slots;
  for (std::size_t i = 0, j = 0; i < seen.size(); i = j) {
    for (j = i + 1; j < seen.size() && seen[j].first == seen[i].first;) ++j;
    if (j - i < 2) continue;
    slots.clear();
    for (std::size_t k = i; k < j; ++k) slots.push_back(seen[k].second);
    std::sort(slots.begin(), slots.end(), [](Slot* a, Slot* b) { return a->first < b->first; });
    auto g = std::make_unique<MultiHold>();
    g->handle = seen[i].first;
    for (Slot* slot : slots) {
      Entry& e = slot->second;
      g->keys.push_back(slot->first);
      if (e.held() && e.handle == g->handle) {
        if (e.extras == nullptr) e.extras = std::make_unique<Extras>();
        e.extras->multi = g.get();
        g->shape.emplace_back(LockMode::kExclusive, 1);
        g->held_by = e.held_by->first;
        if (!e.owner().empty()) g->owner = std::string(e.owner());
        continue;
      }
      for (auto& m : e.group()->members) {
        if (!(m->handle == g->handle)) continue;
        m->multi = g.get();
        g->shape.emplace_back(e.group()->mode, m->take);
        g->held_by = m->held_by;
        g->owner = m->owner;
      }
    }
    multis_.emplace(handle_key(g->handle), std::move(g));
  }
}

}  // namespace holdfast
