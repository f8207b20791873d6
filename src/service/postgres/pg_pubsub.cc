// Pub/sub across the nodes of a cluster (docs/scale-out.md, "Pub/sub"): a PUBLISH on one node
// reaches the subscribers of every node. The node that publishes delivers to its own
// subscribers at once (server/pubsub/registry.h) and sends the message to the others as a
// NOTIFY on the schema's pub/sub channel; each node hears it on its LISTEN connection and
// delivers it to its own. Nothing is kept: a node that is not listening at that moment misses
// it, as a Redis subscriber that is not connected does.
//
// The payload: "<node id>:t:<channel bytes>:<channel><message>" when both are UTF-8 without a
// NUL byte (PostgreSQL carries text), else "<node id>:x:<channel bytes>:<hex of both>". A
// NOTIFY payload is shorter than 8000 bytes, so a message that does not fit is refused before
// it is delivered anywhere. Messages go out in order, from one thread (the housekeeper's).
#include <spdlog/spdlog.h>

#include <cstring>

#include "core/text.h"
#include "service/postgres/pg_backend.h"

namespace holdfast {
namespace {

constexpr std::size_t kMaxPayload = 7999;  // PostgreSQL: "must be shorter than 8000 bytes"

bool text_safe(std::string_view s) {
  return std::memchr(s.data(), '\0', s.size()) == nullptr && is_valid_utf8(s);
}

std::string encode(std::int64_t node, std::string_view channel, std::string_view message) {
  const bool text = text_safe(channel) && text_safe(message);
  std::string p =
      std::to_string(node) + (text ? ":t:" : ":x:") + std::to_string(channel.size()) + ":";
  if (text) {
    p.append(channel);
    p.append(message);
  } else {
    p += hex_encode(channel);
    p += hex_encode(message);
  }
  return p;
}

// The size encode() would make, without making it (node ids take at most 19 digits).
std::size_t encoded_size(std::string_view channel, std::string_view message) {
  const bool text = text_safe(channel) && text_safe(message);
  const std::size_t body = (channel.size() + message.size()) * (text ? 1 : 2);
  return 19 + 3 + std::to_string(channel.size()).size() + 1 + body;
}

}  // namespace

std::optional<std::string> PgBackend::publish_error(std::string_view channel,
                                                    std::string_view message) {
  if (encoded_size(channel, message) <= kMaxPayload) return std::nullopt;
  return "ERR message too long for pub/sub across the nodes: the channel and the message may "
         "take at most about 7950 bytes of UTF-8 text, or 3970 bytes of other data, on a node "
         "over PostgreSQL";
}

void PgBackend::publish(std::string_view channel, std::string_view message) {
  if (!housekeeper_ || !events_) return;
  housekeeper_->defer([this, payload = encode(node_id_, channel, message)] {
    auto sent =
        pool_->run("hf_ev_notify", pg::Params().text(events_->pubsub_channel()).text(payload));
    if (!sent.ok()) spdlog::warn("pub/sub to the other nodes: {}", sent.error().message);
  });
}

void PgBackend::relayed(const std::string& payload) {
  // node:kind:channel-length:body
  const std::size_t a = payload.find(':');
  if (a == std::string::npos || a + 3 > payload.size() || payload[a + 2] != ':') return;
  if (payload.compare(0, a, std::to_string(node_id_)) == 0) return;  // delivered here already
  const char kind = payload[a + 1];
  const std::size_t b = payload.find(':', a + 3);
  if (b == std::string::npos) return;
  std::size_t length = 0;
  for (std::size_t i = a + 3; i < b; ++i) {
    if (payload[i] < '0' || payload[i] > '9') return;
    length = length * 10 + static_cast<std::size_t>(payload[i] - '0');
  }
  std::string body = payload.substr(b + 1);
  if (kind == 'x') {
    auto bytes = hex_decode(body);
    if (!bytes) return;
    body = std::move(*bytes);
  } else if (kind != 't') {
    return;
  }
  if (length > body.size()) return;
  std::string channel = body.substr(0, length);
  std::string message = body.substr(length);
  on_loop([this, channel = std::move(channel), message = std::move(message)] {
    if (on_message_) on_message_(channel, message);
  });
}

void PgBackend::advance() {
  if (events_) events_->advance(wall_now());
}

std::optional<Millis> PgBackend::next_deadline() const {
  return events_ ? events_->next_deadline() : std::nullopt;
}

void PgBackend::set_event_sink(LockEventSink* sink) {
  if (events_) events_->set_sink(sink);
}

}  // namespace holdfast
