#include "core/lock_event.h"

#include <array>

#include "core/text.h"

namespace holdfast {
namespace {

constexpr std::array<std::string_view, kLockEventKinds> kNames = {
    "acquired", "released",   "expired", "renewed",  "transferred",
    "assigned", "unassigned", "queued",  "dequeued",
};

void field(std::string& out, std::string_view name) {
  out += ",\"";
  out += name;
  out += "\":";
}

void number(std::string& out, std::string_view name, std::int64_t v) {
  field(out, name);
  out += std::to_string(v);
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
  out.reserve(192 + e.key.size() + e.held_by.size() + e.owner.size() + e.holder_id.size());
  out += "{\"id\":";
  out += std::to_string(id);
  text(out, "event", event_name(e.kind));
  text(out, "key", e.key);
  field(out, "token");
  out += e.token == 0 ? "null" : std::to_string(e.token);
  text(out, "heldBy", e.held_by);
  field(out, "owner");
  if (e.owner.empty()) {
    out += "null";
  } else {
    append_json_quoted(out, e.owner);
  }
  field(out, "leaseExpiresAt");
  out += e.lease_expires_at == kNever ? "null" : std::to_string(e.lease_expires_at);
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
  return out;
}

}  // namespace holdfast
