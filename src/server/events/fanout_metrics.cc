#include "server/events/fanout_metrics.h"

#include "server/metrics.h"

namespace holdfast {

void append_fanout_metrics(std::string& out, const events::BusStats& e,
                           const pubsub::PubSubStats& p) {
  const auto d = [](auto v) { return static_cast<double>(v); };
  append_metric(out, "holdfast_event_watchers", "gauge",
                "Lock-event watchers connected (GET /v1/events streams and LOCK.WATCH).",
                d(e.watchers));
  append_metric(out, "holdfast_events_total", "counter", "Lock events made.", d(e.events));
  append_metric(out, "holdfast_events_sent_total", "counter",
                "Lock events sent to watchers (one per watcher that got it).", d(e.sent));
  append_metric(out, "holdfast_event_watchers_dropped_total", "counter",
                "Watchers closed because they fell behind their buffer (they were sent reset).",
                d(e.dropped));
  append_metric(out, "holdfast_pubsub_channels", "gauge",
                "Pub/sub channels with a subscriber on this server.", d(p.channels));
  append_metric(out, "holdfast_pubsub_patterns", "gauge",
                "Pub/sub patterns with a subscriber on this server.", d(p.patterns));
  append_metric(out, "holdfast_pubsub_subscriptions", "gauge",
                "Channel and pattern subscriptions on this server.", d(p.subscriptions));
  append_metric(out, "holdfast_pubsub_messages_total", "counter",
                "Messages published here, or on another node of the cluster and relayed here.",
                d(p.messages));
  append_metric(out, "holdfast_pubsub_deliveries_total", "counter",
                "Messages handed to subscribers on this server.", d(p.deliveries));
  append_metric(out, "holdfast_pubsub_subscribers_dropped_total", "counter",
                "Subscribers closed because they left too much unread (the pubsub output limit).",
                d(p.dropped));
}

}  // namespace holdfast
