// The metrics of what fans out to connections (docs/http.md, "Operations"): lock-event
// watchers and pub/sub, appended to GET /metrics.
#pragma once

#include <string>

#include "server/events/event_bus.h"
#include "server/pubsub/registry.h"

namespace holdfast {

void append_fanout_metrics(std::string& out, const events::BusStats& events,
                           const pubsub::PubSubStats& pubsub);

}  // namespace holdfast
