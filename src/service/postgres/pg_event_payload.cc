#include "service/postgres/pg_event_payload.h"

#include <boost/json.hpp>

#include "service/postgres/hold_rows.h"

namespace holdfast::pg {
namespace {

namespace json = boost::json;

std::optional<std::int64_t> number(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
  return std::nullopt;
}

std::string text(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

std::optional<EventPayload> parse_event_payload(std::string_view payload) {
  boost::system::error_code ec;
  json::value v = json::parse(payload, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const json::object& o = v.as_object();
  if (const json::value* w = o.if_contains("watching"); w != nullptr && w->is_bool())
    return EventPayload(WatchingPayload{w->as_bool()});
  ChangePayload c;
  LockEvent& e = c.event;
  if (!parse_event_kind(text(o, "e"), e.kind)) return std::nullopt;
  e.key = text(o, "k");
  if (e.key.empty()) return std::nullopt;
  e.token = static_cast<std::uint64_t>(number(o, "t").value_or(0));
  e.held_by = text(o, "h");
  e.owner = text(o, "o");
  e.holder_id = text(o, "i");
  e.acquired_at = number(o, "a").value_or(0);
  e.lease_expires_at = number(o, "x").value_or(kNever);
  e.scope = number(o, "s").value_or(0) == 1 ? Scope::kSession : Scope::kLease;
  e.hold_kind = number(o, "d").value_or(0) == 1 ? HoldKind::kAssigned : HoldKind::kHandle;
  e.mode = mode_of_number(number(o, "m").value_or(0));
  if (e.mode == LockMode::kSemaphore) {
    e.permits = static_cast<std::uint32_t>(number(o, "p").value_or(0));
    e.take = static_cast<std::uint32_t>(number(o, "n").value_or(0));
  }
  e.at = number(o, "at").value_or(0);
  e.waiter = static_cast<std::uint64_t>(number(o, "w").value_or(0));
  e.timeout_ms = number(o, "tm").value_or(-1);
  const std::string reason = text(o, "r");
  e.reason = reason == "granted"     ? DequeueReason::kGranted
             : reason == "timeout"   ? DequeueReason::kTimeout
             : reason == "cancelled" ? DequeueReason::kCancelled
                                     : DequeueReason::kNone;
  e.waited_ms = number(o, "wt").value_or(-1);
  if (auto pv = number(o, "pv")) c.replaced = static_cast<std::uint64_t>(*pv);
  if (const json::value* pl = o.if_contains("pl"); pl != nullptr && pl->is_bool())
    c.replaced_live = pl->as_bool();
  return EventPayload(std::move(c));
}

std::string waiter_payload(const LockEvent& e) {
  json::object o;
  o["e"] = event_name(e.kind);
  o["k"] = e.key;
  o["h"] = e.held_by;
  if (!e.owner.empty()) o["o"] = e.owner;
  if (!e.holder_id.empty()) o["i"] = e.holder_id;
  o["m"] = mode_number(e.mode);
  if (e.mode == LockMode::kSemaphore) {
    o["p"] = e.permits;
    o["n"] = e.take;
  }
  o["w"] = e.waiter;
  if (e.timeout_ms >= 0) o["tm"] = e.timeout_ms;
  if (e.reason != DequeueReason::kNone) o["r"] = dequeue_reason_name(e.reason);
  if (e.waited_ms >= 0) o["wt"] = e.waited_ms;
  o["at"] = e.at;
  return json::serialize(o);
}

}  // namespace holdfast::pg
