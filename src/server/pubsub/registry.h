// PubSub: Redis's publish/subscribe (docs/resp.md, "Pub/sub"), as a registry of who listens to
// what. No value is ever kept for a channel: a message reaches the subscribers of the moment
// and is gone.
//
//  1. subscribe()/psubscribe() add a subscriber to a channel or a glob pattern (core/glob.h,
//     Redis's syntax); the connection keeps its own list too (resp/subscriptions.h).
//  2. publish() hands the message to every subscriber of the channel, then to every
//     subscriber of each matching pattern (a subscriber of both gets it twice, as in Redis),
//     and answers how many deliveries that made: PUBLISH's reply. Each frame is written once
//     per protocol version and copied into each subscriber's output.
//  3. On a node over PostgreSQL the message also goes to the other nodes (`relay`, through
//     NOTIFY), which deliver() it to their own subscribers; PUBLISH counts this node's
//     deliveries only, as PUBLISH in a Redis Cluster counts the node's own.
//
// On the event loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/lock_types.h"

namespace holdfast::pubsub {

class Subscriber {
 public:
  // The protocol version its frames are written in (2 or 3).
  virtual int proto() const = 0;
  // One whole message or pmessage frame. May not subscribe or unsubscribe from here.
  virtual void on_message(std::string_view frame) = 0;

 protected:
  ~Subscriber() = default;
};

struct PubSubStats {
  std::size_t channels = 0;       // channels with at least one subscriber
  std::size_t patterns = 0;       // patterns with at least one subscriber
  std::size_t subscriptions = 0;  // channel and pattern subscriptions, all subscribers
  std::uint64_t messages = 0;     // messages published here or relayed from other nodes
  std::uint64_t deliveries = 0;   // frames handed to subscribers
  std::uint64_t dropped = 0;      // subscribers closed for falling behind
};

class Registry {
 public:
  // True when it was not subscribed yet.
  bool subscribe(Subscriber& s, std::string_view channel);
  bool unsubscribe(Subscriber& s, std::string_view channel);
  bool psubscribe(Subscriber& s, std::string_view pattern);
  bool punsubscribe(Subscriber& s, std::string_view pattern);

  // PUBLISH: delivers here and relays to the other nodes; answers the deliveries made here.
  std::int64_t publish(std::string_view channel, std::string_view message);
  // A message another node published: delivered here only.
  std::int64_t deliver(std::string_view channel, std::string_view message);
  // Where messages go besides this server (a node's NOTIFY); empty: nowhere. `refusal` answers
  // the error line for a message the relay cannot carry (PUBLISH answers it and sends
  // nothing), or nullopt.
  using Relay = std::function<void(std::string_view, std::string_view)>;
  using Refusal = std::function<std::optional<std::string>(std::string_view, std::string_view)>;
  void set_relay(Relay relay, Refusal refusal = {}) {
    relay_ = std::move(relay);
    refusal_ = std::move(refusal);
  }
  std::optional<std::string> refusal(std::string_view channel, std::string_view message) const {
    return refusal_ ? refusal_(channel, message) : std::nullopt;
  }

  // PUBSUB CHANNELS [pattern]: channels with a subscriber (matching the glob, if not empty).
  std::vector<std::string> channels(std::string_view pattern) const;
  // PUBSUB NUMSUB: a channel's subscribers; PUBSUB NUMPAT: patterns with a subscriber.
  std::size_t numsub(std::string_view channel) const;
  std::size_t numpat() const { return patterns_.size(); }

  void dropped() { ++stats_.dropped; }
  PubSubStats stats() const;

 private:
  struct PatternEntry {
    std::string pattern;
    std::vector<Subscriber*> subscribers;
  };

  std::unordered_map<std::string, std::vector<Subscriber*>, StringHash, std::equal_to<>> channels_;
  std::vector<PatternEntry> patterns_;  // in the order they were first subscribed
  std::size_t subscriptions_ = 0;
  Relay relay_;
  Refusal refusal_;
  PubSubStats stats_;
};

}  // namespace holdfast::pubsub
