#include "core/lock_event.h"

#include <array>
#include <charconv>
#include <cstring>

#include "core/text.h"

namespace holdfast {
namespace {

constexpr std::array<std::string_view, kLockEventKinds> kNames = {
    "acquired", "released",   "expired", "renewed",  "transferred",
    "assigned", "unassigned", "queued",  "dequeued",
};

// `,"name":` with one append (events are written for every change while someone watches).
void field(std::string& out, std::string_view name) {
  char buf[32];
  if (name.size() + 4 > sizeof(buf)) {
    out += ",\"";
    out += name;
    out += "\":";
    return;
  }
  buf[0] = ',';
  buf[1] = '"';
  std::memcpy(buf + 2, name.data(), name.size());
  buf[name.size() + 2] = '"';
  buf[name.size() + 3] = ':';
  out.append(buf, name.size() + 4);
}

// Without a temporary string: events are written for every change while someone watches.
void digits(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

void number(std::string& out, std::string_view name, std::int64_t v) {
  field(out, name);
  digits(out, v);
}

void text(std::string& out, std::string_view name, std::string_view v) {
  field(out, name);
  append_json_quoted(out, v);
}

}  // namespace

std::string_view event_name(LockEventKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

bool parse_event_kind(std::string_view name, LockEventKind& kind) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] != name) continue;
    kind = static_cast<LockEventKind>(i);
    return true;
  }
  return false;
}

std::string_view dequeue_reason_name(DequeueReason reason) {
  switch (reason) {
    case DequeueReason::kGranted:
      return "granted";
    case DequeueReason::kTimeout:
      return "timeout";
    case DequeueReason::kCancelled:
      return "cancelled";
    case DequeueReason::kNone:
      break;
  }
  return "";
}

std::string event_json(const LockEvent& e, std::uint64_t id) {
  std::string out;
  append_event_json(out, e, id);
  return out;
}

void append_event_json(std::string& out, const LockEvent& e, std::uint64_t id) {
  out.reserve(out.size() + 192 + e.key.size() + e.held_by.size() + e.owner.size() +
              e.holder_id.size());
  out += "{\"id\":";
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), id);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
  text(out, "event", event_name(e.kind));
  text(out, "key", e.key);
  field(out, "token");
  if (e.token == 0) {
    out += "null";
  } else {
    digits(out, static_cast<std::int64_t>(e.token));
  }
  text(out, "heldBy", e.held_by);
  field(out, "owner");
  if (e.owner.empty()) {
    out += "null";
  } else {
    append_json_quoted(out, e.owner);
  }
  field(out, "leaseExpiresAt");
  if (e.lease_expires_at == kNever) {
    out += "null";
  } else {
    digits(out, e.lease_expires_at);
  }
  number(out, "at", e.at);
  const bool waiter = e.kind == LockEventKind::kQueued || e.kind == LockEventKind::kDequeued;
  if (!waiter) {
    if (e.acquired_at != 0) number(out, "acquiredAt", e.acquired_at);
    text(out, "scope", scope_name(e.scope));
    text(out, "kind", kind_name(e.hold_kind));
  }
  if (!e.holder_id.empty()) text(out, "holder", e.holder_id);
  text(out, "mode", mode_name(e.mode));
  if (e.mode == LockMode::kSemaphore) {
    number(out, "permits", e.permits);
    number(out, "take", e.take);
  }
  if (e.waiter != 0) number(out, "waiter", static_cast<std::int64_t>(e.waiter));
  if (e.timeout_ms >= 0) number(out, "timeoutMs", e.timeout_ms);
  if (e.reason != DequeueReason::kNone) text(out, "reason", dequeue_reason_name(e.reason));
  if (e.waited_ms >= 0) number(out, "waitedMs", e.waited_ms);
  out += '}';
}

}  // namespace holdfast
