// EventBus: the one place lock events fan out to their readers (docs/events.md): the
// `GET /v1/events` streams, `LOCK.WATCH` connections and, through the stream, the web page.
//
//  1. The first watcher switches the service's events on (LockService::set_event_sink);
//     until then no event is made at all, so nobody pays for them. When the last one leaves,
//     they stay on for `linger_ms` if a watcher that can resume watched (a stream, whose
//     reader comes back with Last-Event-ID: a page that reconnects), and the first event
//     after that switches them off again; if none could (LOCK.WATCH), they go off at once.
//  2. Each event gets the next id, is written as JSON once (a single server's arrive written
//     but for the id: on_written_event), and is kept in a window of the last `window` events
//     for readers that come back with the id they saw last (Last-Event-ID). Until such a
//     reader (a stream) watches, nobody could come back: the window then keeps only the batch
//     not yet told, and the lock path writes its events into a few slots that stay in the
//     cache rather than cycling through thousands.
//  3. Every watcher whose prefix the key starts with, and whose principal may read the key
//     (LockService::may_read), is told. A watcher has its own bounded buffer: one that falls
//     behind calls unwatch() and dropped() (a metric) and closes, after telling its reader to
//     start over (`reset`).
//  4. Events are told in batches: those made in one piece of the loop's work wait until it is
//     done (BusOptions::later), then each watcher that sees every key (no prefix, and a
//     principal that may read all: LockService::may_read_all, asked once per batch) gets the
//     whole batch, whose bytes are written once per format (Batch) into a block shared by all
//     of them: a LOCK.WATCH connection that keeps up sends its range of the block itself, so
//     ten watchers cost one writing of a batch and ten sends, not ten rounds of per-event work
//     or ten copies. The others are told event by event.
//
// Ids: a number that only grows. They start at the server's start time in milliseconds times
// 1000, so that they keep growing across a restart unless the server made more than a thousand
// events per millisecond of its life, and an id the server never gave (from before a restart,
// or from another server) is answered with `reset`.
//
// On the event loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/lock_event.h"
#include "core/principal.h"
#include "server/events/event_window.h"
#include "service/lock_service.h"

namespace holdfast::events {

// A watch's prefix: empty (every key), or what a key may be (core/validation.h), as
// INVALID_ARGUMENT naming "prefix".
std::optional<Error> check_prefix(std::string_view prefix);

// An event as readers get it: its id, and its JSON (core/lock_event.h's event_json).
struct Published {
  std::uint64_t id = 0;
  LockEventKind kind = LockEventKind::kAcquired;
  std::string key;
  std::string json;
  // Made once by the first watcher that needs it, for the others (a RESP push frame per
  // protocol version: resp/subscriptions.h).
  mutable std::string frames[2];
};

// Bytes of a block that several readers share: [begin, end) of *block. Appending to the block
// later moves its memory but not these offsets, so a holder reads it through view() when it
// sends, and the block lives as long as anyone holds it.
struct SharedText {
  std::shared_ptr<const std::string> block;
  std::size_t begin = 0, end = 0;

  std::size_t size() const { return end - begin; }
  std::string_view view() const {
    return block ? std::string_view(*block).substr(begin, end - begin) : std::string_view();
  }
};

// The events of one batch, in id order, for the watchers that see them all.
class Batch {
 public:
  // The forms a watcher sends events in; each is written once per batch.
  enum Format : std::size_t { kResp2, kResp3, kSse, kFormats };
  // Appends one event in a format to `out`.
  using Render = void (*)(std::string& out, const Published& event);

  const std::vector<const Published*>& events() const { return events_; }
  // Every event of the batch in `format`, written by `render` for the first watcher that asks,
  // at the end of the format's block: batch after batch, the watchers that keep up hold ranges
  // of one block that follow each other, and send them from it without a copy of their own.
  const SharedText& text(Format format, Render render) const;

 private:
  friend class EventBus;
  // A block stops growing here once a watcher still holds part of it; one that nobody holds
  // is emptied and written again from its start.
  static constexpr std::size_t kBlockBytes = 1 << 20;

  std::vector<const Published*> events_;
  mutable std::shared_ptr<std::string> blocks_[kFormats];
  mutable SharedText texts_[kFormats];
  mutable bool made_[kFormats] = {};
};

class Watcher {
 public:
  // One event for this watcher, in id order. May call EventBus::unwatch(*this) (a full buffer).
  virtual void on_event(const Published& event) = 0;
  // A batch whose every event this watcher sees, in id order; as on_event, may unwatch. By
  // default, event by event.
  virtual void on_events(const Batch& batch) {
    for (const Published* e : batch.events()) on_event(*e);
  }
  // Events were lost (on a node over PostgreSQL, its LISTEN connection broke): the reader must
  // read the state anew; the watch goes on. `id`: the newest id so far.
  virtual void on_reset(std::uint64_t id) = 0;
  // A watch that began before events flowed (ready() was false): they flow from now on. On a
  // node over PostgreSQL the first reader waits for the cluster's triggers.
  virtual void on_ready() {}
  // Whether its reader can come back with the last id it saw (Last-Event-ID): then events
  // stay on for BusOptions::linger_ms after the last watcher left.
  virtual bool can_resume() const { return true; }

 protected:
  ~Watcher() = default;
};

struct BusOptions {
  std::size_t window = 4096;  // events kept for Last-Event-ID
  Millis linger_ms = 60'000;  // events stay on this long after the last watcher left
  // Asks the loop to call EventBus::tell() once the current piece of work is done (the server
  // posts it). Empty: each event is told as it is made.
  std::function<void()> later = {};
};

struct BusStats {
  std::size_t watchers = 0;
  std::uint64_t events = 0;   // events made
  std::uint64_t sent = 0;     // events told to watchers (one per watcher that got it)
  std::uint64_t dropped = 0;  // watchers that fell behind and were closed
};

class EventBus final : public LockEventSink {
 public:
  // `service` and `clock` must outlive the bus.
  EventBus(LockService& service, const Clock& clock, BusOptions options = {});
  ~EventBus() override;
  EventBus(const EventBus&) = delete;
  EventBus& operator=(const EventBus&) = delete;

  enum class Start {
    kLive,     // no id was given: events from now on
    kResumed,  // the events after the given id were told first, then live ones
    kReset,    // the given id cannot be resumed: the reader must read the state anew
  };
  // Starts telling `watcher` the events of keys that start with `prefix` and that `principal`
  // may read. `principal` must outlive the watch. A watcher watches once (call unwatch first to
  // change what it watches).
  Start watch(Watcher& watcher, const Principal& principal, std::string prefix,
              std::optional<std::uint64_t> last_id = std::nullopt);
  void unwatch(Watcher& watcher);
  // A watcher fell behind and is being closed.
  void dropped() { ++stats_.dropped; }

  // The newest id given so far (the first one minus one before any).
  std::uint64_t last_id() const { return last_id_; }
  // Events flow: a change made now reaches the watchers (LockEventSink::on_events_ready).
  bool ready() const { return ready_; }
  BusStats stats() const;

  // Tells the watchers the events made since the last batch (BusOptions::later).
  void tell();

  void on_lock_event(const LockEventView& event) override;
  void on_written_event(const WrittenEvent& event) override;
  void on_events_lost() override;
  void on_events_ready() override;

 private:
  struct Entry {
    Watcher* watcher = nullptr;  // null: unwatched while events were being told
    const Principal* principal = nullptr;
    std::string prefix;
    // Began before events flowed: on_ready() is due, then the events it missed.
    bool waits_for_ready = false;
    std::uint64_t from_id = 0;  // told the events after this id only
  };

  // A batch never grows past this many events: it is told, and its memory stays small.
  static constexpr std::size_t kMostUntold = 256;

  bool sees(const Entry& e, const Published& p) const;
  void activate();
  void deactivate();
  void compact();

  LockService& service_;
  const Clock& clock_;
  const BusOptions options_;
  bool active_ = false;
  bool ready_ = false;
  bool lingers_ = false;  // a watcher that can resume watched since events went on
  std::uint64_t last_id_;
  // A Last-Event-ID below this cannot be resumed: events before it went unrecorded.
  std::uint64_t resumable_from_;
  Millis idle_since_ = 0;
  EventWindow<Published> window_;
  std::size_t untold_ = 0;  // the newest events of window_, not yet told
  Batch batch_;             // reused: its buffers keep their capacity
  std::string body_;        // on_lock_event's, reused
  std::vector<Entry> watchers_;
  bool telling_ = false;  // inside the loop over watchers_: unwatch() only marks
  BusStats stats_;
};

}  // namespace holdfast::events
