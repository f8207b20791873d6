// The lock table's lock events (core/lock_event.h): a change the table already reports to its
// store, told again in the words of the event stream, plus what the store never sees (a lease
// end, a waiter arriving or leaving). Made only while someone watches (events_ set).
//
// A change names a hold by key and token; the hold is still in place when the change is
// reported (a release is reported before the hold is dropped, a grant or renewal after it was
// made), so the event reads its principal, owner and lease from there: it is a view
// (LockEventView) of the hold in place, told before anything moves it.
#include "core/lock_table.h"
#include "core/lock_table_entry.h"

namespace holdfast {
namespace {

// Views into `h`, which must stay in place while the event is told.
LockEventView from_hold(LockEventKind kind, const HoldState& h) {
  LockEventView e;
  e.kind = kind;
  e.key = h.key;
  e.token = h.token;
  e.held_by = h.held_by;
  e.owner = h.owner;
  e.holder_id = h.holder_id;
  e.acquired_at = h.acquired_at;
  e.lease_expires_at = h.lease_expires_at;
  e.scope = h.scope;
  e.hold_kind = h.kind;
  e.mode = h.mode;
  e.permits = h.permits;
  e.take = h.take;
  return e;
}

}  // namespace

// An exclusive hold's event, read in place (no HoldState in between, no string copied).
LockEventView LockTable::hold_event(LockEventKind kind, const Slot& slot) const {
  const Entry& en = slot.second;
  LockEventView e;
  e.kind = kind;
  e.key = slot.first;
  e.token = en.token;
  e.held_by = en.held_by->first;
  e.owner = en.owner();
  e.holder_id = en.holder_id();
  e.acquired_at = en.acquired_at;
  e.lease_expires_at = en.lease_expires_at;
  e.scope = en.scope;
  e.hold_kind = en.kind;
  return e;
}

void LockTable::report_member(LockEventKind kind, const Slot& slot, const Member& m) {
  const HoldState h = member_view(slot, m, /*with_handle=*/false);
  report(from_hold(kind, h));
}

void LockTable::describe(const Change& change, const Slot* given) {
  if (const auto* granted = std::get_if<Granted>(&change)) {
    const HoldState& h = granted->hold;
    LockEventKind kind = LockEventKind::kAcquired;
    if (h.kind == HoldKind::kAssigned)
      kind = transferring_ ? LockEventKind::kTransferred : LockEventKind::kAssigned;
    report(from_hold(kind, h));
    return;
  }
  if (const auto* group = std::get_if<GroupGranted>(&change)) {
    for (const HoldState& h : group->holds) report(from_hold(LockEventKind::kAcquired, h));
    return;
  }
  std::string_view key;
  std::uint64_t token = 0;
  bool released = false;
  if (const auto* r = std::get_if<Released>(&change)) {
    key = r->key;
    token = r->token;
    released = true;
  } else if (const auto* n = std::get_if<Renewed>(&change)) {
    key = n->key;
    token = n->token;
  } else {
    return;  // rule sets and the horizon are not lock events
  }
  if (given == nullptr) {
    auto it = keys_.find(absl_view(key));
    if (it == keys_.end()) return;
    given = &*it;
  }
  const Slot& slot = *given;
  const Entry& e = slot.second;
  if (e.held() && e.token == token) {
    const LockEventKind kind = !released                       ? LockEventKind::kRenewed
                               : e.kind == HoldKind::kAssigned ? LockEventKind::kUnassigned
                                                               : LockEventKind::kReleased;
    report(hold_event(kind, slot));
    return;
  }
  if (e.group() == nullptr) return;
  for (const auto& m : e.group()->members) {
    if (m->token != token) continue;
    report_member(released ? LockEventKind::kReleased : LockEventKind::kRenewed, slot, *m);
    return;
  }
}

void LockTable::report_waiter(const Waiter& w, LockEventKind kind, DequeueReason reason,
                              Millis now) {
  LockEventView e;
  e.kind = kind;
  e.key = w.slot->first;
  e.held_by = w.held_by;
  if (w.owner) e.owner = *w.owner;
  e.holder_id = w.holder_id;
  e.mode = w.mode;
  if (w.mode == LockMode::kSemaphore) {
    e.permits = w.permits;
    e.take = w.take;
  }
  e.waiter = w.id;
  if (kind == LockEventKind::kQueued) {
    e.timeout_ms = w.timeout_ms;
  } else {
    e.reason = reason;
    const Millis queued_at = w.deadline - w.timeout_ms;
    e.waited_ms = now > queued_at ? now - queued_at : 0;
  }
  report(e);
}

}  // namespace holdfast
