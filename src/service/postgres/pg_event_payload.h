// The payloads of the events channel (schema_events.cc), read and written in one place: the
// triggers' JSON objects for changes of holds, the nodes' own for their waiters (queued,
// dequeued), and the control message {"watching": bool} that tells whether anyone in the
// cluster watches. A payload is at most 8000 bytes (PostgreSQL's limit); keys (1024 bytes),
// principals, owners and holder ids (256 each) keep an event far below it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/lock_event.h"

namespace holdfast::pg {

// A change of a hold, as a trigger told it.
struct ChangePayload {
  LockEvent event;
  // A grant that replaced a hold: that hold's token, and whether it was still live (a re-take
  // or a transfer; otherwise its lease had run out: an `expired` nobody told yet).
  std::optional<std::uint64_t> replaced;
  bool replaced_live = false;
};

struct WatchingPayload {
  bool watching = false;
};

using EventPayload = std::variant<ChangePayload, WatchingPayload>;

// Nullopt for a payload that is neither (logged by the caller and dropped).
std::optional<EventPayload> parse_event_payload(std::string_view payload);
// A waiter's queued or dequeued event, as a node sends it.
std::string waiter_payload(const LockEvent& event);

}  // namespace holdfast::pg
