// LocalWaiters: the blocked acquirers of ONE node whose locks live in PostgreSQL, and the
// lifecycle of that node's client connections as far as waiting and session holds go.
//
// Waiting (each blocked acquire runs on its own executor thread and waits here):
//  1. join(key) puts the caller at the tail of the key's FIFO queue. A caller that lands at
//     the head is told to attempt at once.
//  2. wait() returns kAttempt only to the HEAD of a queue, and only when there is a reason to
//     try the database again: a poke (a NOTIFY from any node, or a release through this
//     node), or the retry time the last failed attempt set (the holder's lease end by the
//     database clock, or the periodic re-check that covers a lost notification). Everyone
//     behind the head sleeps, so a hot key costs one attempt per release per node, not one
//     per waiter.
//  3. The head attempts outside the lock. On failure it sets its next retry time and waits
//     again; a poke that arrived during the attempt is kept, so no wake-up is lost.
//  4. leave() takes the waiter out (granted, timed out, failed or cancelled). If it was the
//     head, the next waiter becomes head: after a grant it retries at the new lease's end;
//     otherwise it takes over the departing head's retry time (or attempts at once when the
//     departing head had been poked).
//
// Multi-key waiters: watch(keys) makes a waiter that stands in no key's FIFO order but hears
// every poke of any of its keys, and is told to attempt whenever one comes (or its retry time
// passes). It counts as a waiter of each key (count()), and keeps each key's queue open, so the
// key stays registered in the database while it waits; it never holds back a waiter of one key.
//
// Queues across nodes: a queue's life (first waiter in to last waiter out) has a generation
// number. join() tells the waiter that opened it (opened_generation() != 0), which registers
// the key in the database before attempting; the hook set with on_queue_closed() hears when
// the last one leaves, to unregister that generation (docs: hold_rows.h).
//
// Connections: a call that may grant for a connection (session) brackets itself with
// begin_call/end_call. close_session() wakes the session's waiters (kCancelled) and
// remembers the session as closed for a while, so a call that was already submitted for it
// but had not yet started is refused, and a grant that raced with the close is undone by its
// caller (end_call answers true) instead of outliving the connection.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/lock_types.h"  // SessionId, StringHash

namespace holdfast {

class LocalWaiters {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  enum class Wake { kAttempt, kCancelled, kDeadline };

  class Waiter;
  struct WaiterDeleter {
    LocalWaiters* owner;
    void operator()(Waiter* w) const;
  };
  // Leaves the queue when destroyed (after leave() it is a no-op).
  using Ticket = std::unique_ptr<Waiter, WaiterDeleter>;

  LocalWaiters() = default;
  LocalWaiters(const LocalWaiters&) = delete;
  LocalWaiters& operator=(const LocalWaiters&) = delete;

  // Joins key's queue at the tail. A waiter of a closed session (or during shutdown) starts
  // cancelled. `key` empty: a waiter in no queue (a rate-limited acquire sleeping), which
  // only wakes on its deadline or cancellation. `batched`: its grant attempts go through the
  // commit batches (pg_batch.h), so a release may bring the attempt along ("Hand-over").
  Ticket join(std::string_view key, SessionId session, bool batched = false);
  // A multi-key waiter of every key in `keys` (see above); it attempts at once.
  Ticket watch(const std::vector<std::string>& keys, SessionId session);
  bool is_head(const Waiter& w) const;
  // Non-zero when `w` opened its key's queue: the generation it must register.
  std::uint64_t opened_generation(const Waiter& w) const;
  // A multi-key waiter's keys whose queue it opened, with the generation each must register.
  std::vector<std::pair<std::string, std::uint64_t>> opened_generations(const Waiter& w) const;
  // Called (outside the lock, on the thread of the waiter that left last) when a key's queue
  // empties. Set before any join().
  void on_queue_closed(std::function<void(const std::string& key, std::uint64_t generation)> fn) {
    on_closed_ = std::move(fn);
  }
  Wake wait(Waiter& w, TimePoint deadline);
  // After a failed attempt: try again on its own at `at` (if nothing pokes it first).
  void retry_at(Waiter& w, TimePoint at);
  // Leaves the queue. `next_try`: when the next head should attempt (after a grant: at the
  // new lease's end). None: the next head inherits this one's retry time, or attempts at once
  // if this one had been poked or never attempted.
  void leave(Waiter& w, std::optional<TimePoint> next_try = std::nullopt);

  // Something freed `key` (or may have): its head attempts now.
  void poke(std::string_view key);
  // Only the multi-key waiters of `key` (its head was poked already, pg_batch.h "Hand-over").
  void poke_watchers(std::string_view key);
  // Notifications may have been lost: every head attempts now.
  void poke_all();

  // False when the session is closed (or the node is stopping): refuse the call.
  bool begin_call(SessionId session);
  // True when the session closed while the call ran: a grant it made must be undone.
  bool end_call(SessionId session);
  // The session now owns a session-scoped hold in the database.
  void note_session_hold(SessionId session);
  // The connection is gone: its waiters wake cancelled. True when it may own session holds.
  bool close_session(SessionId session);
  // Shutdown: every waiter wakes cancelled and no call begins any more.
  void close_all();

  // This node's waiters for key, multi-key ones included.
  std::size_t count(std::string_view key) const;
  // Every waiter of this node, a multi-key one once per key.
  std::size_t total() const;
  // True when someone of this node is queued for key (a newcomer must not jump ahead).
  // Multi-key waiters are not a queue: they hold no key back.
  bool has_queue(std::string_view key) const;
  // True when key's first waiter is a `batched` one: only its attempt can share a release's
  // commit; a release that waited for any other's would wait in vain.
  bool head_attempts_batched(std::string_view key) const;

 private:
  struct Session {
    int calls = 0;
    bool session_holds = false;
  };
  struct Queue {
    std::list<Waiter*> waiters;
    std::list<Waiter*> watchers;  // multi-key waiters, in no order
    std::uint64_t generation = 0;
  };
  struct Closed {
    std::string key;
    std::uint64_t generation = 0;
  };
  // REQUIRES: mu_ held. The queues that emptied (report them after unlocking).
  std::vector<Closed> unlink(Waiter& w, std::optional<TimePoint> next_try);
  void report(const std::vector<Closed>& closed);
  // REQUIRES: mu_ held. Wakes the multi-key waiters of `q`'s key.
  void poke_watchers(Queue& q);
  // REQUIRES: mu_ held. The queue of key, opened if needed (its generation then in `opened`).
  Queue& queue_of(std::string_view key, std::uint64_t& opened);
  void remember_closed(SessionId session, TimePoint now);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Queue, StringHash, std::equal_to<>> queues_;
  std::unordered_multimap<SessionId, Waiter*> by_session_;
  std::unordered_map<SessionId, Session> sessions_;
  // Recently closed sessions, oldest first, forgotten after kRememberClosed.
  std::unordered_set<SessionId> closed_;
  std::deque<std::pair<TimePoint, SessionId>> closed_order_;
  std::unordered_set<Waiter*> all_;
  std::uint64_t last_generation_ = 0;
  std::function<void(const std::string&, std::uint64_t)> on_closed_;
  bool stopping_ = false;
};

}  // namespace holdfast
