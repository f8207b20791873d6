// PgEvents: the lock events of a node over PostgreSQL (docs/events.md, "On nodes over
// PostgreSQL"): every node streams the cluster's events, its own and those of grants made
// through other nodes, from one source: the events channel (schema_events.cc).
//
//  1. set_sink() (the loop, when the first reader comes or the last one went): the node's row
//     in holdfast_watchers, which turns the triggers on for the whole cluster (or off, with the
//     last row), on a database thread. Then the live holds are read once, so their lease ends
//     are known.
//  2. notified() (the LISTEN thread): each payload (pg_event_payload.h) goes to the loop,
//     where it becomes a lock event for the sink, in the order PostgreSQL delivered it: the
//     commit order, so each key's changes come in their order.
//  3. Expiry changes no row, so no trigger tells it. The node keeps the lease end of every live
//     hold it knows of (a "mirror", on the loop) and, when one passes, asks the database
//     (holdfast_hold_lease) whether that hold's lease did end; if so it tells `expired` itself.
//     A grant that replaced a hold whose lease had run out tells it first, if the node had not
//     yet. Every node does this for its own readers.
//  4. A node's waiters (queued, dequeued) live on that node only; while anyone in the cluster
//     watches (holdfast_watchers has a row: the {"watching"} message and the node's own
//     registration say so), each one is sent on the events channel too, so every node tells it.
//     A node hears of the first reader elsewhere a moment after it registered: the waiters it
//     has then are told `queued` as it hears, so none that is still waiting goes untold.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/lock_event.h"
#include "service/postgres/pg_event_payload.h"
#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

class ToldWaiter;

class PgEvents {
 public:
  struct Hooks {
    std::function<void(std::function<void()>)> on_loop;  // run on the event loop thread
    std::function<void(std::function<void()>)> on_db;    // run on a thread that may use the pool
  };

  PgEvents(PgPool& pool, std::int64_t node_id, Hooks hooks)
      : pool_(pool), node_id_(node_id), hooks_(std::move(hooks)) {}

  static std::vector<Statement> statements();
  // At start: the schema's channels, whether anyone watches; this node's row from a previous
  // life goes.
  Status start();
  const std::string& channel() const { return channel_; }
  const std::string& pubsub_channel() const { return pubsub_channel_; }

  // The node stops: its row goes (and with the last row the triggers). Its own thread.
  void stop();
  // The LISTEN connection came back: what was sent meanwhile is lost. The readers hear it and
  // the live holds are read again.
  void resynced();

  // The loop thread.
  void set_sink(LockEventSink* sink);
  std::optional<Millis> next_deadline() const;
  void advance(Millis now);

  // The LISTEN thread: a payload of channel().
  void notified(const std::string& payload);

  // Executor threads: a waiter of this node came (tells `queued` if the cluster watches, or
  // later, when this node hears that it does) or goes (tells `dequeued` if `queued` was told).
  void enlist(ToldWaiter& waiter);
  void discharge(ToldWaiter& waiter);
  std::uint64_t next_waiter_id() {
    return (static_cast<std::uint64_t>(node_id_) << 32) | ++waiters_;
  }

 private:
  struct Known {
    LockEvent hold;  // as its grant or last renewal told it
  };
  void deliver(ChangePayload change);
  void emit(const LockEvent& event);
  void remember(const LockEvent& hold);
  void forget(const std::string& key, std::uint64_t token);
  void expire_if_known(const std::string& key, std::uint64_t token);
  void seed(std::vector<LockEvent> holds, std::uint64_t generation);
  // On a database thread: registers (or not) this node and, if watching, reads the live holds
  // for the loop.
  void register_and_seed(bool watching, std::uint64_t generation);
  void restart_mirror();
  void checked(const std::string& key, std::uint64_t token, bool present,
               std::optional<Millis> lease, Millis db_now);
  // Whether anyone in the cluster watches, as this node just heard; the first time it does, the
  // waiters already queued here are told.
  void set_cluster_watching(bool watching);
  // Sends the events of this node's waiters on the events channel, in one statement, in order.
  void tell_waiters(std::vector<LockEvent> events);

  PgPool& pool_;
  const std::int64_t node_id_;
  const Hooks hooks_;
  std::string channel_, pubsub_channel_;
  std::atomic<bool> cluster_watching_{false};
  std::atomic<bool> registered_{false};  // this node's row is in holdfast_watchers
  std::atomic<std::uint32_t> waiters_{0};
  // This node's waiters (executor threads); a waiter does not go while its `queued` is sent.
  std::mutex waiters_mu_;
  std::condition_variable waiters_cv_;
  std::set<ToldWaiter*> live_waiters_;

  // The loop thread's.
  LockEventSink* sink_ = nullptr;
  std::uint64_t generation_ = 0;  // of the sink: answers for an older one are dropped
  std::unordered_map<std::string, std::map<std::uint64_t, Known>> known_;
  std::set<std::pair<Millis, std::pair<std::string, std::uint64_t>>> lease_ends_;
  std::set<std::pair<std::string, std::uint64_t>> checking_;
  std::set<std::pair<std::string, std::uint64_t>> ended_;  // until the seed came
  bool seeded_ = false;
};

// A blocked call of this node as a waiter of its keys (one for a single acquire or assign, each
// of a multi-key request's): `queued` when made (or when this node hears that someone watches),
// `dequeued` with its reason when it goes, both only while anyone in the cluster watches (and the
// second only after the first).
class ToldWaiter {
 public:
  // `who`: the waiter's principal, owner, holder id, mode, permits and take.
  ToldWaiter(PgEvents& events, const LockEvent& who, std::vector<std::string> keys,
             Millis timeout_ms);
  ~ToldWaiter();
  ToldWaiter(const ToldWaiter&) = delete;
  ToldWaiter& operator=(const ToldWaiter&) = delete;
  // How it ends (by default: cancelled, its connection closed or the node stopped).
  void ends(DequeueReason reason) { reason_ = reason; }

 private:
  friend class PgEvents;
  enum class Told { kNo, kTelling, kYes };

  std::vector<LockEvent> queued_events() const;

  PgEvents& events_;
  LockEvent who_;
  std::vector<std::string> keys_;
  std::chrono::steady_clock::time_point since_;
  Millis timeout_ms_;
  DequeueReason reason_ = DequeueReason::kCancelled;
  Told told_ = Told::kNo;  // under PgEvents::waiters_mu_
};

}  // namespace holdfast::pg
