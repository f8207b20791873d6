#include "core/lock_table.h"

#include "core/glob.h"
#include "core/list_cursor.h"
#include "core/lock_table_entry.h"

#include <algorithm>
#include <utility>

namespace holdfast {

bool LockTable::SessionIndex::empty() const {
  return holds.empty() && waiters.empty() && members.empty() && multis.empty();
}

LockTable::LockTable(ChangeSink* sink) : sink_(sink) {}

LockTable::~LockTable() = default;

void LockTable::emit(const Change& change, const Slot* slot) {
  if (sink_ != nullptr) sink_->on_change(change);
  if (events_ != nullptr) describe(change, slot);
}

LockTable::Interned* LockTable::intern(std::string_view held_by) {
  if (last_interned_ == nullptr || last_interned_->first != held_by) {
    auto it = principals_.find(held_by);
    if (it == principals_.end()) it = principals_.emplace(std::string(held_by), 0).first;
    last_interned_ = &*it;
  }
  ++last_interned_->second;
  return last_interned_;
}

void LockTable::unintern(Interned* held_by) {
  if (--held_by->second > 0) return;
  if (held_by == last_interned_) last_interned_ = nullptr;
  principals_.erase(held_by->first);
}

LockTable::Slot* LockTable::live_or_new(std::string_view key, Millis now) {
  auto [it, inserted] = keys_.try_emplace(std::string(key));
  Slot* slot = &*it;
  if (!inserted && slot->second.held() && slot->second.lease_expires_at <= now) {
    expire(slot, now);  // the hand-off may erase the entry
    slot = &*keys_.try_emplace(std::string(key)).first;
  } else if (!inserted && slot->second.group() != nullptr) {
    expire_due_members(slot, now);
    slot = &*keys_.try_emplace(std::string(key)).first;
  }
  return slot;
}

LockTable::Slot& LockTable::slot_for(std::string_view key) {
  auto it = keys_.find(absl_view(key));
  if (it == keys_.end()) it = keys_.emplace(std::string(key), Entry{}).first;
  return *it;
}

LockTable::Slot* LockTable::find_live(std::string_view key, Millis now) {
  auto it = keys_.find(absl_view(key));
  if (it == keys_.end()) return nullptr;
  Slot* slot = &*it;
  if (slot->second.held() && slot->second.lease_expires_at <= now) {
    expire(slot, now);
    it = keys_.find(absl_view(key));  // the hand-off may have erased the entry
    return it == keys_.end() ? nullptr : &*it;
  }
  if (slot->second.group() != nullptr) {
    expire_due_members(slot, now);
    it = keys_.find(absl_view(key));
    return it == keys_.end() ? nullptr : &*it;
  }
  return slot;
}

void LockTable::maybe_erase(Slot* slot) {
  if (!slot->second.busy() && slot->second.waiter_count() == 0 &&
      (delays_.empty() || !delays_.contains(slot)))
    keys_.erase(slot->first);
}

HoldState LockTable::view(const Slot& slot, bool with_handle) const {
  const Entry& e = slot.second;
  HoldState h;
  h.key = slot.first;
  if (with_handle) h.handle = e.handle;
  h.token = e.token;
  h.held_by = e.held_by->first;
  h.owner = std::string(e.owner());
  h.holder_id = std::string(e.holder_id());
  h.acquired_at = e.acquired_at;
  h.lease_expires_at = e.lease_expires_at;
  h.scope = e.scope;
  h.kind = e.kind;
  h.lock_delay_ms = e.lock_delay();
  return h;
}

HoldState LockTable::grant(Slot* slot, std::string_view held_by,
                           std::optional<std::string_view> owner, std::string_view holder_id,
                           Millis lease_expires_at, Scope scope, HoldKind kind, SessionId session,
                           Millis lock_delay_ms, Millis now) {
  place_hold(slot, held_by, owner, holder_id, lease_expires_at, scope, kind, session, lock_delay_ms,
             now, kind == HoldKind::kHandle ? handles_.next() : Handle{}, nullptr);
  // Built once in the variant the sink reads: a grant's strings are copied once, not twice.
  Change granted{Granted{view(*slot, /*with_handle=*/true)}};
  emit(granted);
  return std::move(std::get<Granted>(granted).hold);
}

void LockTable::place_hold(Slot* slot, std::string_view held_by,
                           std::optional<std::string_view> owner, std::string_view holder_id,
                           Millis lease_expires_at, Scope scope, HoldKind kind, SessionId session,
                           Millis lock_delay_ms, Millis now, const Handle& handle,
                           MultiHold* multi) {
  Entry& e = slot->second;
  e.handle = handle;
  e.token = ++last_token_;
  e.acquired_at = now;
  e.lease_expires_at = lease_expires_at;
  e.held_by = intern(held_by);
  if (owner || !holder_id.empty() || scope == Scope::kSession || lock_delay_ms > 0 ||
      multi != nullptr) {
    e.extras = std::make_unique<Extras>();
    if (owner) e.extras->owner = std::string(*owner);
    e.extras->holder_id = std::string(holder_id);
    if (scope == Scope::kSession) e.extras->session = session;
    e.extras->lock_delay_ms = lock_delay_ms;
    e.extras->multi = multi;
  } else {
    e.extras.reset();
  }
  e.scope = scope;
  e.kind = kind;
  if (scope == Scope::kSession && multi == nullptr) sessions_[session].holds.push_back(slot);
  if (lease_expires_at != kNever) lease_ends_.set(slot, lease_expires_at);
  ++held_count_;
  ++counters_.grants;
}

void LockTable::drop_hold(Slot* slot) {
  Entry& e = slot->second;
  lease_ends_.remove(slot);
  if (e.scope == Scope::kSession) {
    auto it = sessions_.find(e.session());
    if (it != sessions_.end()) {
      auto& holds = it->second.holds;
      auto pos = std::find(holds.begin(), holds.end(), slot);
      if (pos != holds.end()) {
        *pos = holds.back();
        holds.pop_back();
      }
      if (it->second.empty()) sessions_.erase(it);
    }
  }
  unintern(e.held_by);
  e.held_by = nullptr;
  e.extras.reset();
  e.scope = Scope::kLease;
  --held_count_;
}

void LockTable::free_key(Slot* slot, Millis now) {
  drop_hold(slot);
  hand_off(slot, now);
}

void LockTable::expire(Slot* slot, Millis now) {
  if (MultiHold* g = slot->second.multi()) {  // a group's lease ends for all its keys
    end_multi(g, /*expired=*/true);
    drain(now);
    return;
  }
  ++counters_.expiries;
  if (events_ != nullptr) report(hold_event(LockEventKind::kExpired, *slot));
  const Entry& e = slot->second;
  if (e.lock_delay() > 0)
    close_after_end(slot, e.lease_expires_at, e.lock_delay(), e.token, e.held_by->first,
                    /*durable=*/e.scope == Scope::kLease, now);
  free_key(slot, now);
}

// Grants the key to its waiters in order while the head one fits beside the holds (an exclusive
// waiter needs a free key; consecutive shared waiters are granted together; a semaphore waiter
// needs its permits free), so nobody overtakes a waiter that does not fit yet. Waiters whose
// deadline has come time out on the way. Erases the entry if nobody is left.
void LockTable::hand_off(Slot* slot, Millis now) {
  if (handing_off_) {
    defer(slot);
    return;
  }
  handing_off_ = true;
  hand_off_key(slot, now);
  handing_off_ = false;
  drain(now);
}

void LockTable::drain(Millis now) {
  if (handing_off_) return;
  handing_off_ = true;
  while (!deferred_.empty()) {
    const std::string key = std::move(deferred_.back());
    deferred_.pop_back();
    auto it = keys_.find(absl_view(key));
    if (it != keys_.end()) hand_off_key(&*it, now);
  }
  handing_off_ = false;
}

void LockTable::hand_off_key(Slot* slot, Millis now) {
  Entry& e = slot->second;
  if ((grants_closed_until_ != 0 && now < grants_closed_until_) || delay_until(slot, now) != 0) {
    maybe_erase(slot);  // the waiters stay queued until grants open
    return;
  }
  while (!e.held() && e.queue != nullptr) {
    Waiter* w = e.queue->head;
    if (w->deadline <= now) {
      time_out(w, now);
      continue;
    }
    if (w->multi != nullptr) {  // a multi-key waiter: granted only with all its keys
      if (!multi_ready(*w->multi, now)) break;
      grant_multi(*w->multi, now);
      continue;
    }
    if (!can_grant(e, *w)) break;
    if (events_ != nullptr)
      report_waiter(*w, LockEventKind::kDequeued, DequeueReason::kGranted, now);
    WaiterOutcome out;
    out.waiter = w->id;
    out.session = w->session;
    out.granted = true;
    out.assign = w->assign;
    out.key = slot->first;
    out.timeout_ms = w->timeout_ms;
    Millis lease_end = w->ttl_ms ? now + *w->ttl_ms : kNever;
    if (w->mode != LockMode::kExclusive) {
      out.hold = grant_member(slot, *w, lease_end, now);
    } else if (w->assign) {
      out.hold = grant(slot, w->held_by, std::nullopt, w->holder_id, lease_end, Scope::kLease,
                       HoldKind::kAssigned, 0, w->lock_delay_ms, now);
    } else {
      std::optional<std::string_view> owner;
      if (w->owner) owner = *w->owner;
      out.hold = grant(slot, w->held_by, owner, {}, lease_end,
                       w->session_scoped ? Scope::kSession : Scope::kLease, HoldKind::kHandle,
                       w->session, w->lock_delay_ms, now);
    }
    unlink_waiter(w);
    outcomes_.push_back(std::move(out));
  }
  maybe_erase(slot);
}

WaiterId LockTable::enqueue(Slot* slot, const AcquireRequest& request, bool assign,
                            std::string_view holder_id, std::optional<Millis> ttl_ms,
                            Millis timeout_ms, Millis now) {
  auto w = std::make_unique<Waiter>();
  w->id = ++last_waiter_;
  w->slot = slot;
  w->session = request.session;
  w->timeout_ms = timeout_ms;
  w->deadline = now + w->timeout_ms;
  w->ttl_ms = ttl_ms;
  w->assign = assign;
  w->session_scoped = request.session_scoped;
  if (request.owner) w->owner = std::string(*request.owner);
  w->holder_id = std::string(holder_id);
  w->held_by = std::string(request.held_by);
  w->mode = assign ? LockMode::kExclusive : request.mode;
  w->take = request.take;
  w->permits = request.permits;
  w->lock_delay_ms = request.lock_delay_ms.value_or(0);
  Entry& e = slot->second;
  if (e.queue == nullptr) e.queue = std::make_unique<WaiterQueue>();
  WaiterQueue& q = *e.queue;
  if (w->mode == LockMode::kSemaphore) q.semaphore_permits = w->permits;
  w->prev = q.tail;
  if (q.tail != nullptr) {
    q.tail->next = w.get();
  } else {
    q.head = w.get();
  }
  q.tail = w.get();
  ++q.size;
  wait_ends_.set(w.get(), w->deadline);
  if (w->session != 0) sessions_[w->session].waiters.push_back(w.get());
  WaiterId id = w->id;
  if (events_ != nullptr) report_waiter(*w, LockEventKind::kQueued, DequeueReason::kNone, now);
  waiters_.emplace(id, std::move(w));
  return id;
}

// Takes the waiter out of its queue, the timer heap and its session, and destroys it.
// Does not erase the key's entry: callers decide.
void LockTable::unlink_waiter(Waiter* w, DequeueReason reason, Millis now) {
  if (events_ != nullptr && reason != DequeueReason::kNone)
    report_waiter(*w, LockEventKind::kDequeued, reason, now);
  if (MultiWait* mw = w->multi) {
    erase_unordered(mw->legs, w);
    if (mw->legs.empty()) multi_waits_.erase(mw->id);
  }
  Entry& e = w->slot->second;
  WaiterQueue& q = *e.queue;
  (w->prev != nullptr ? w->prev->next : q.head) = w->next;
  (w->next != nullptr ? w->next->prev : q.tail) = w->prev;
  if (--q.size == 0) e.queue.reset();
  wait_ends_.remove(w);
  if (w->session != 0) {
    auto it = sessions_.find(w->session);
    if (it != sessions_.end()) {
      erase_unordered(it->second.waiters, w);
      if (it->second.empty()) sessions_.erase(it);
    }
  }
  waiters_.erase(w->id);
}

void LockTable::time_out(Waiter* w, Millis now) {
  if (w->multi != nullptr) {
    time_out_multi(*w->multi, now);
    return;
  }
  WaiterOutcome out;
  out.waiter = w->id;
  out.session = w->session;
  out.granted = false;
  out.assign = w->assign;
  out.key = w->slot->first;
  out.timeout_ms = w->timeout_ms;
  ++counters_.timeouts;
  unlink_waiter(w, DequeueReason::kTimeout, now);
  outcomes_.push_back(std::move(out));
}

bool LockTable::granting(Millis now) {
  if (!delay_ends_.empty()) lift_due_delays(now);
  if (grants_closed_until_ == 0) return true;
  if (now < grants_closed_until_) return false;
  grants_closed_until_ = 0;
  for (const auto& [id, w] : waiters_) defer(w->slot);
  std::sort(deferred_.begin(), deferred_.end());
  deferred_.erase(std::unique(deferred_.begin(), deferred_.end()), deferred_.end());
  drain(now);
  return true;
}

Result<AcquireOutcome> LockTable::acquire(const AcquireRequest& r, Millis now) {
  if (r.mode != LockMode::kExclusive) return acquire_shared(r, now);
  const Scope scope = r.session_scoped ? Scope::kSession : Scope::kLease;
  const Millis lease_end = now + r.ttl_ms;
  const bool all_open = granting(now);
  Slot* slot = live_or_new(r.key, now);
  if (auto conflict = kind_conflict(*slot, LockMode::kExclusive, 0)) {
    maybe_erase(slot);
    return *conflict;
  }
  const bool open = all_open && delay_until(slot, now) == 0;
  AcquireOutcome out;
  // A free key may still have waiters: a multi-key waiter waiting for its other keys.
  if (open && !slot->second.busy() && slot->second.waiter_count() == 0) {
    out.kind = AcquireOutcome::Kind::kGranted;
    out.hold = grant(slot, r.held_by, r.owner, {}, lease_end, scope, HoldKind::kHandle, r.session,
                     r.lock_delay_ms.value_or(0), now);
    return out;
  }
  const Entry& e = slot->second;
  // Re-take: the same principal of the same kind (both in heldBy) and the same owner string;
  // or a take-over of any handle hold of the same principal. Never of one key of a multi-key
  // group: its keys are held and let go together.
  const bool same_principal = e.held() && e.kind == HoldKind::kHandle &&
                              e.held_by->first == r.held_by && e.multi() == nullptr;
  const bool retake = !r.no_retake && r.owner && !e.owner().empty() && e.owner() == *r.owner;
  if (open && same_principal && (retake || r.take_over_own)) {
    drop_hold(slot);
    out.kind = AcquireOutcome::Kind::kGranted;
    out.hold = grant(slot, r.held_by, r.owner, {}, lease_end, scope, HoldKind::kHandle, r.session,
                     r.lock_delay_ms.value_or(0), now);
    return out;
  }
  if (r.timeout_ms == 0) {
    maybe_erase(slot);  // a free key while grants are closed
    out.kind = AcquireOutcome::Kind::kContended;
    return out;
  }
  out.kind = AcquireOutcome::Kind::kQueued;
  out.waiter = enqueue(slot, r, /*assign=*/false, {}, r.ttl_ms, r.timeout_ms, now);
  return out;
}

ReleaseOutcome LockTable::force_release(std::string_view key, Millis now) {
  Slot* slot = find_live(key, now);
  if (slot != nullptr) {
    const std::vector<MultiHold*> groups = multis_on(*slot);
    if (!groups.empty()) {  // a group's key lets go of the whole group
      for (MultiHold* g : groups) end_multi(g, /*expired=*/false);
      if (!slot->second.busy()) {
        drain(now);
        return ReleaseOutcome{true};
      }  // else the key's other holds go too, before anything is handed on
    }
  }
  if (slot != nullptr && slot->second.group() != nullptr) {
    release_group(slot, now);
    return ReleaseOutcome{true};
  }
  if (slot == nullptr || !slot->second.held()) return ReleaseOutcome{false};
  emit(Released{slot->first, slot->second.token}, slot);
  ++counters_.releases;
  free_key(slot, now);
  return ReleaseOutcome{true};
}

RenewOutcome LockTable::extend(std::string_view key, Millis lease_expires_at, Millis now) {
  Slot* slot = find_live(key, now);
  if (slot != nullptr) {
    for (MultiHold* g : multis_on(*slot)) renew_multi(g, lease_expires_at);
  }
  if (slot != nullptr && slot->second.group() != nullptr) {
    for (auto& m : slot->second.group()->members) {
      m->lease_expires_at = lease_expires_at;
      member_ends_.set(m.get(), lease_expires_at);
      ++counters_.renewals;
      emit(Renewed{slot->first, m->token, lease_expires_at}, slot);
    }
    return RenewOutcome{true, lease_expires_at};
  }
  if (slot == nullptr || !slot->second.held()) return RenewOutcome{};
  Entry& e = slot->second;
  e.lease_expires_at = lease_expires_at;
  lease_ends_.set(slot, lease_expires_at);
  ++counters_.renewals;
  emit(Renewed{slot->first, e.token, lease_expires_at}, slot);
  return RenewOutcome{true, lease_expires_at};
}

Result<RenewOutcome> LockTable::renew(std::string_view key, std::string_view handle, Millis ttl_ms,
                                      Millis now) {
  Slot* slot = find_live(key, now);
  if (MultiHold* g = slot != nullptr ? find_multi(key, handle) : nullptr) {
    renew_multi(g, now + ttl_ms);
    return RenewOutcome{true, now + ttl_ms};
  }
  if (Member* m = slot != nullptr ? find_member(slot, handle) : nullptr) {
    m->lease_expires_at = now + ttl_ms;
    member_ends_.set(m, m->lease_expires_at);
    ++counters_.renewals;
    emit(Renewed{slot->first, m->token, m->lease_expires_at}, slot);
    return RenewOutcome{true, m->lease_expires_at};
  }
  auto parsed = Handle::parse(handle);
  if (slot == nullptr || !slot->second.held() || slot->second.kind != HoldKind::kHandle ||
      !parsed || !(slot->second.handle == *parsed)) {
    return RenewOutcome{};
  }
  Entry& e = slot->second;
  e.lease_expires_at = now + ttl_ms;
  lease_ends_.set(slot, e.lease_expires_at);
  ++counters_.renewals;
  emit(Renewed{slot->first, e.token, e.lease_expires_at}, slot);
  return RenewOutcome{true, e.lease_expires_at};
}

Result<ReleaseOutcome> LockTable::release(std::string_view key, std::string_view handle,
                                          Millis now) {
  Slot* slot = find_live(key, now);
  if (MultiHold* g = slot != nullptr ? find_multi(key, handle) : nullptr) {
    end_multi(g, /*expired=*/false);
    drain(now);
    return ReleaseOutcome{true};
  }
  if (Member* m = slot != nullptr ? find_member(slot, handle) : nullptr) {
    release_member(m, now);
    return ReleaseOutcome{true};
  }
  auto parsed = Handle::parse(handle);
  if (slot == nullptr || !slot->second.held() || slot->second.kind != HoldKind::kHandle ||
      !parsed || !(slot->second.handle == *parsed)) {
    return ReleaseOutcome{false};
  }
  emit(Released{slot->first, slot->second.token}, slot);
  ++counters_.releases;
  free_key(slot, now);
  return ReleaseOutcome{true};
}

Result<StatusView> LockTable::status(std::string_view key, Millis now) {
  StatusView s;
  s.key = std::string(key);
  s.as_of = now;
  Slot* slot = find_live(key, now);
  if (slot == nullptr) return s;
  s.waiters = slot->second.waiter_count();
  s.lock_delay_until = delay_until(slot, now);
  if (slot->second.group() != nullptr) return group_status(*slot, std::move(s));
  if (slot->second.held()) {
    s.held = true;
    s.hold = view(*slot, /*with_handle=*/false);
  }
  return s;
}

KeyPeek LockTable::peek(std::string_view key, Millis now) {
  KeyPeek p;
  Slot* slot = find_live(key, now);
  if (slot == nullptr) return p;
  p.in_use = true;
  p.lock_delay_until = delay_until(slot, now);
  const Entry& e = slot->second;
  if (e.group() != nullptr) {
    p.grouped = true;
  } else if (e.held()) {
    p.held = true;
    p.kind = e.kind;
    p.held_by = e.held_by->first;
    p.owner = e.owner();
    p.lease_expires_at = e.lease_expires_at;
  }
  return p;
}

ListPage LockTable::list(std::string_view match, std::string_view after, std::size_t count,
                         Millis now) {
  // Collect the matching live holds after the cursor, then keep the `count` smallest keys.
  std::vector<const Slot*> found;
  for (const auto& slot : keys_) {
    const Entry& e = slot.second;
    if (e.group() == nullptr && (!e.held() || e.lease_expires_at <= now)) continue;
    if (!after.empty() && slot.first <= after) continue;
    if (!match.empty() && !glob_match(match, slot.first)) continue;
    found.push_back(&slot);
  }
  auto by_key = [](const Slot* a, const Slot* b) { return a->first < b->first; };
  ListPage page;
  if (found.size() > count) {
    std::partial_sort(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(count),
                      found.end(), by_key);
    found.resize(count);
    page.next_cursor = encode_list_cursor(found.back()->first);
  } else {
    std::sort(found.begin(), found.end(), by_key);
    page.next_cursor = "0";
  }
  page.holds.reserve(found.size());
  for (const Slot* s : found) {
    if (s->second.group() == nullptr) {
      page.holds.push_back(view(*s, /*with_handle=*/false));
      continue;
    }
    for (const auto& m : s->second.group()->members)  // a page keeps a key's holds together
      if (m->lease_expires_at > now) page.holds.push_back(member_view(*s, *m, false));
  }
  return page;
}

Result<AcquireOutcome> LockTable::assign(const AssignRequest& r, Millis now) {
  const Millis lease_end = r.ttl_ms ? now + *r.ttl_ms : kNever;
  const bool all_open = granting(now);
  Slot* slot = live_or_new(r.key, now);
  if (auto conflict = kind_conflict(*slot, LockMode::kExclusive, 0)) {
    maybe_erase(slot);
    return *conflict;
  }
  const bool open = all_open && delay_until(slot, now) == 0;
  AcquireOutcome out;
  if (open && !slot->second.busy() && slot->second.waiter_count() == 0) {
    out.kind = AcquireOutcome::Kind::kGranted;
    out.hold = grant(slot, r.held_by, std::nullopt, r.holder_id, lease_end, Scope::kLease,
                     HoldKind::kAssigned, 0, r.lock_delay_ms, now);
    return out;
  }
  Entry& e = slot->second;
  if (e.held() && e.kind == HoldKind::kAssigned && e.holder_id() == r.holder_id) {
    // Re-assigning to the same holder refreshes the lease and keeps the token.
    e.lease_expires_at = lease_end;
    if (lease_end == kNever) {
      lease_ends_.remove(slot);
    } else {
      lease_ends_.set(slot, lease_end);
    }
    ++counters_.renewals;
    emit(Renewed{slot->first, e.token, lease_end}, slot);
    out.kind = AcquireOutcome::Kind::kGranted;
    out.hold = view(*slot, /*with_handle=*/false);
    return out;
  }
  if (!r.timeout_ms || *r.timeout_ms == 0) maybe_erase(slot);  // a free key while closed
  if (!r.timeout_ms) return lock_held(r.key);
  if (*r.timeout_ms == 0) {
    out.kind = AcquireOutcome::Kind::kContended;
    return out;
  }
  AcquireRequest as_request;
  as_request.session = r.session;
  as_request.held_by = r.held_by;
  as_request.lock_delay_ms = r.lock_delay_ms;
  out.kind = AcquireOutcome::Kind::kQueued;
  out.waiter =
      enqueue(slot, as_request, /*assign=*/true, r.holder_id, r.ttl_ms, *r.timeout_ms, now);
  return out;
}

Result<HoldState> LockTable::transfer(std::string_view key, std::string_view to_id,
                                      std::string_view from_id, std::string_view held_by,
                                      Millis now) {
  if (!granting(now)) return recovering_error(grants_closed_until_).with("key", std::string(key));
  Slot* slot = find_live(key, now);
  if (slot != nullptr && slot->second.group() != nullptr)
    return not_holder(key, "the key is held in shared or semaphore mode, not assigned");
  if (slot == nullptr || !slot->second.held())
    return not_holder(key, "the key is not assigned to fromId (it is free)");
  if (slot->second.kind != HoldKind::kAssigned)
    return not_holder(key, "the key is held by a handle hold, not assigned");
  if (slot->second.holder_id() != from_id)
    return not_holder(key, "the key is not assigned to fromId");
  const Millis lease_end = slot->second.lease_expires_at;  // the lease carries over
  const Millis lock_delay = slot->second.lock_delay();     // and so does its lock-delay
  drop_hold(slot);
  transferring_ = true;
  HoldState moved = grant(slot, held_by, std::nullopt, to_id, lease_end, Scope::kLease,
                          HoldKind::kAssigned, 0, lock_delay, now);
  transferring_ = false;
  return moved;
}

Result<ReleaseOutcome> LockTable::unassign(std::string_view key,
                                           std::optional<std::string_view> holder_id, Millis now) {
  Slot* slot = find_live(key, now);
  if (slot != nullptr && slot->second.group() != nullptr)
    return not_holder(key, "the key is held in shared or semaphore mode, not assigned");
  if (slot == nullptr || !slot->second.held()) return ReleaseOutcome{false};
  if (slot->second.kind != HoldKind::kAssigned)
    return not_holder(key, "the key is held by a handle hold; release it with its handle");
  if (holder_id && slot->second.holder_id() != *holder_id)
    return not_holder(key, "the key is assigned to another holder");
  emit(Released{slot->first, slot->second.token}, slot);
  ++counters_.releases;
  free_key(slot, now);
  return ReleaseOutcome{true};
}

Result<HolderView> LockTable::holder(std::string_view key, Millis now) {
  HolderView v;
  v.key = std::string(key);
  Slot* slot = find_live(key, now);
  if (slot != nullptr && slot->second.group() != nullptr) {
    const Member& newest = *slot->second.group()->members.back();
    v.held = true;
    v.token = newest.token;
    v.acquired_at = newest.acquired_at;
    v.lease_expires_at = newest.lease_expires_at;
    return v;
  }
  if (slot == nullptr || !slot->second.held()) return v;
  const Entry& e = slot->second;
  v.held = true;
  if (e.kind == HoldKind::kAssigned) v.holder = std::string(e.holder_id());
  v.token = e.token;
  v.acquired_at = e.acquired_at;
  v.lease_expires_at = e.lease_expires_at;
  return v;
}

void LockTable::advance(Millis now) {
  granting(now);
  for (;;) {
    const bool lease_due = !lease_ends_.empty() && lease_ends_.top_deadline() <= now;
    const bool wait_due = !wait_ends_.empty() && wait_ends_.top_deadline() <= now;
    const bool member_due = !member_ends_.empty() && member_ends_.top_deadline() <= now;
    if (member_due && (!lease_due || member_ends_.top_deadline() <= lease_ends_.top_deadline()) &&
        (!wait_due || member_ends_.top_deadline() <= wait_ends_.top_deadline())) {
      expire_due_members(member_ends_.top()->slot, now);
      continue;
    }
    if (!lease_due && !wait_due) return;
    // Earliest first, so a key that ends before a waiter's deadline still reaches the waiter.
    if (lease_due && (!wait_due || lease_ends_.top_deadline() <= wait_ends_.top_deadline())) {
      expire(lease_ends_.top(), now);
    } else {
      Waiter* w = wait_ends_.top();
      Slot* slot = w->slot;
      time_out(w, now);
      after_waiter_left(slot, now);
    }
  }
}

std::optional<Millis> LockTable::next_deadline() const {
  std::optional<Millis> at;
  if (!lease_ends_.empty()) at = lease_ends_.top_deadline();
  if (!wait_ends_.empty() && (!at || wait_ends_.top_deadline() < *at))
    at = wait_ends_.top_deadline();
  if (!member_ends_.empty() && (!at || member_ends_.top_deadline() < *at))
    at = member_ends_.top_deadline();
  if (grants_closed_until_ != 0 && (!at || grants_closed_until_ < *at)) at = grants_closed_until_;
  if (!delay_ends_.empty() && (!at || delay_ends_.top_deadline() < *at))
    at = delay_ends_.top_deadline();
  return at;
}

void LockTable::end_session(SessionId session, Millis now) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  SessionIndex index = std::move(it->second);
  sessions_.erase(it);
  // Waiters first, so a released session hold is not handed to the same dead session.
  // All of them leave before any key is handed on, so no hand-off grants one of them.
  std::vector<Slot*> left;
  left.reserve(index.waiters.size());
  for (Waiter* w : index.waiters) {
    left.push_back(w->slot);
    w->session = 0;  // its session entry is gone already
    unlink_waiter(w, DequeueReason::kCancelled, now);
  }
  for (Slot* slot : left) defer(slot);
  drain(now);
  for (MultiHold* g : index.multis) {
    g->session = 0;  // its session entry is gone already
    end_multi(g, /*expired=*/false);
  }
  drain(now);
  // A session end is a holder vanishing, like an expiry: a hold's lock-delay closes its key
  // from then (or from its lease end, if that came first and was not processed yet).
  for (Member* m : index.members) {
    m->session = 0;  // keeps drop_member away from the erased index
    close_after_end(m->slot, std::min(m->lease_expires_at, now), m->lock_delay_ms, m->token,
                    m->held_by, false, now);
    release_member(m, now);
  }
  for (Slot* slot : index.holds) {
    const Entry& e = slot->second;
    close_after_end(slot, std::min(e.lease_expires_at, now), e.lock_delay(), e.token,
                    e.held_by->first, false, now);
    slot->second.scope = Scope::kLease;  // keeps drop_hold away from the erased index
    emit(Released{slot->first, slot->second.token}, slot);
    ++counters_.releases;
    free_key(slot, now);
  }
}

void LockTable::cancel_waiter(WaiterId id, Millis now) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  if (MultiWait* mw = it->second->multi) {
    cancel_multi(*mw, DequeueReason::kCancelled, now);
    drain(now);
    return;
  }
  Slot* slot = it->second->slot;
  unlink_waiter(it->second.get(), DequeueReason::kCancelled, now);
  after_waiter_left(slot, now);
}

std::vector<WaiterOutcome> LockTable::take_outcomes() {
  std::vector<WaiterOutcome> out;
  out.swap(outcomes_);
  return out;
}

}  // namespace holdfast
