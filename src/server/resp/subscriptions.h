// Subscriptions: what one RESP connection listens to, for pub/sub (SUBSCRIBE, PSUBSCRIBE) and
// lock events (LOCK.WATCH) alike: one mechanism for both (docs/resp.md, "Pub/sub";
// docs/events.md).
//
//  1. The commands add and remove channels, patterns and the watch here and in the registry
//     or the event bus; count() is Redis's subscription count, the watch counting as one. In
//     RESP2 a connection with a count above 0 only runs the subscription commands, PING, QUIT
//     and RESET (pipeline.cc), as after SUBSCRIBE in Redis.
//  2. Messages and events arrive as push frames (RESP3 `>`; RESP2 arrays) through Output, which
//     sends them out of band in RESP3 and after the replies before them in RESP2.
//  3. Each listener has a bounded backlog (bytes written to the connection and not yet sent):
//     - a lock event that finds more than `watch_bytes` waiting is not sent: the connection
//       gets `lock.event reset`, stops reading and closes (a metric counts it);
//     - a message that finds more than `pubsub_hard_bytes` waiting, or more than
//       `pubsub_soft_bytes` for `pubsub_soft_ms`, closes the connection, as Redis's
//       `client-output-buffer-limit pubsub 32mb 8mb 60` does.
//  4. end() (the connection closed, RESET) lets go of everything.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "server/events/event_bus.h"
#include "server/pubsub/registry.h"
#include "server/resp/codec.h"

namespace holdfast::resp {

struct FanoutLimits {
  std::size_t watch_bytes = 4 * 1024 * 1024;
  std::size_t pubsub_hard_bytes = 32 * 1024 * 1024;
  std::size_t pubsub_soft_bytes = 8 * 1024 * 1024;
  std::chrono::milliseconds pubsub_soft_time{60'000};
};

class Subscriptions final : public pubsub::Subscriber, public events::Watcher {
 public:
  // The connection's side (the pipeline).
  class Output {
   public:
    virtual int protocol() const = 0;
    // A push frame: out of band in RESP3, in order in RESP2. `can_wait`: it may be sent a
    // moment later with others (a lock event), rather than at the end of this loop round.
    virtual void push_frame(std::string_view frame, bool can_wait = false) = 0;
    // Push frames that may wait (lock events), as bytes shared with other watchers: sent from
    // there when nothing of the connection's own is in front of them, else copied.
    virtual void push_shared(const events::SharedText& frames) = 0;
    // Bytes written for the connection and not sent yet.
    virtual std::size_t backlog() const = 0;
    // The listener fell behind: what is not being written yet is dropped, `last` (may be
    // empty) is the last frame; then the connection reads nothing more and closes.
    virtual void fell_behind(std::string_view last) = 0;

   protected:
    ~Output() = default;
  };

  // `registry` and `bus` may be null (no pub/sub, no events: the commands say so).
  Subscriptions(Output& out, pubsub::Registry* registry, events::EventBus* bus,
                const Principal& principal, const FanoutLimits& limits)
      : out_(out), registry_(registry), bus_(bus), principal_(principal), limits_(limits) {}
  ~Subscriptions() { end(); }
  Subscriptions(const Subscriptions&) = delete;
  Subscriptions& operator=(const Subscriptions&) = delete;

  bool has_pubsub() const { return registry_ != nullptr; }
  bool has_events() const { return bus_ != nullptr; }
  pubsub::Registry* registry() { return registry_; }

  // Redis's count: channels, patterns and the watch.
  std::size_t count() const { return channels_.size() + patterns_.size() + (watching_ ? 1 : 0); }
  const std::vector<std::string>& channels() const { return channels_; }
  const std::vector<std::string>& patterns() const { return patterns_; }
  void subscribe(std::string_view channel);
  void unsubscribe(std::string_view channel);
  void psubscribe(std::string_view pattern);
  void punsubscribe(std::string_view pattern);

  // LOCK.WATCH: (re)starts the watch of keys starting with `prefix`. False: events do not flow
  // yet (a node over PostgreSQL turns the cluster's triggers on first); the confirmation,
  // ["lock.watch", prefix, count], is then pushed when they do, and the caller writes none.
  bool watch(std::string prefix);
  void unwatch();
  bool watching() const { return watching_; }
  const std::string& prefix() const { return prefix_; }

  // Unsubscribes and unwatches everything.
  void end();

  int proto() const override { return out_.protocol(); }
  void on_message(std::string_view frame) override;
  void on_event(const events::Published& event) override;
  void on_events(const events::Batch& batch) override;
  void on_reset(std::uint64_t id) override;
  void on_ready() override;
  // LOCK.WATCH has no Last-Event-ID: nothing lingers for it.
  bool can_resume() const override { return false; }
  // ["lock.watch" or "lock.unwatch", prefix (or nil), count].
  static void write_confirmation(ReplyWriter& out, std::string_view kind, const std::string* prefix,
                                 std::size_t count);

  // The push frame of a lock event, and of the reset that ends a watch.
  static std::string event_frame(int proto, const events::Published& event);
  static void append_event_frame(std::string& out, int proto, const events::Published& event);
  static std::string reset_frame(int proto);

 private:
  // The watch fell behind (now, or before): nothing more is sent.
  bool watch_behind();

  Output& out_;
  pubsub::Registry* registry_;
  events::EventBus* bus_;
  const Principal& principal_;
  const FanoutLimits& limits_;
  std::vector<std::string> channels_, patterns_;  // in the order they were subscribed
  bool watching_ = false;
  std::string prefix_;
  bool behind_ = false;           // fell behind: nothing more is sent
  bool confirm_pending_ = false;  // LOCK.WATCH's confirmation waits for events to flow
  std::optional<std::chrono::steady_clock::time_point> soft_since_;
};

}  // namespace holdfast::resp
