// CommitBatcher: group commit for the hot lock statements of a scale-out node (docs/scale-out.md,
// "Group commit"). A grant attempt, a release or a renew is one statement (hold_rows.h) whose
// commit is a WAL flush; sent one per transaction, a node's rate is one flush per operation.
// Here the statements of many callers share one transaction and so one flush:
//
//  1. A caller (an executor thread) queues its statement in a lane, chosen by the key's hash,
//     so every statement on one key goes through one lane in the order it came. A lane has at
//     most one batch in flight; the first caller to find its lane idle is the leader.
//  2. The leader settles the node's unknown outcomes first (hold_rows.h), takes the queued
//     statements up to the bound (kMaxOps, kMaxBytes), orders them by key (stable: one key's
//     statements keep their order) and sends them as one round trip, one implicit
//     transaction (PgPool::run_batch). Callers that queue meanwhile ride on the next batch,
//     led by the first of them once the commit answered: nobody waits for a timer.
//  3. The answer of each statement is handed to its caller only after the commit answered.
//     - Committed: each caller gets its own statement's rows, as if it had run alone just
//       after the batch's previous statements (the statements are the same prepared ones).
//     - The round trip failed as a whole: every caller gets that error. When its outcome is
//       unknown, each caller records its own doubt and the node settles it as it settles a
//       single statement (hold_rows.h, "Unknown outcomes").
//     - A statement failed (or the commit did): the transaction rolled back, nothing of it
//       took effect, so every caller runs its statement again alone (`alone`), and the one
//       whose statement fails gets its own error. Nothing is answered twice or lost.
//
// Hand-over (a hot key on one node): a release whose key has callers of this node waiting, and
// of no other node (the caller checks: pg_backend.cc), may bring its follower along. Once the
// release is queued, `queued` wakes the key's first waiter (pg_waiters.h), whose grant attempt then
// queues in the same lane, behind the release; the leader of a batch holding such a release waits
// for that attempt (at most kFollowerWaitUs) before it sends. The release and the grant to the next
// waiter then commit together, and the grant reads the key as the release left it. Waking the
// waiter early is safe whatever happens: an attempt always runs after the release (same lane, later
// or same transaction), and an attempt that finds the key still held just waits again, as after any
// poke.
//
// Set statements: PostgreSQL spends far more on starting each statement than on the row it
// changes, so the calls of one statement that has a set form (hold_sets.h: grant attempts,
// releases by handle) run as one statement whose parameters are arrays of theirs. A set
// statement takes distinct keys, so a batch runs in rounds: round r holds the r-th statement
// of each key (in the order they came), and runs its set statements (when two calls or more
// share one) and then its other statements in key order; round r + 1 follows. Each call's
// share of a set statement's answer is its own result, as the statement run alone would have
// given it; a call the set form does not take (a multi-key group's release) is answered
// `alone` and runs by itself after the batch, nothing of it having been done.
//
// Lock order: a batch locks its keys' rows in key order, as every statement that locks
// several rows does (hold_rows.h), and two lanes never share a key, so batches do not wait for
// each other in a cycle. (Within a round: releases lock the rows of live holds; a grant
// attempt locks only rows that look free to it, which no release of another batch holds.) Within a
// key, a grant takes the key's claim (schema_values.cc: an advisory lock) before its row, while a
// release or renew takes only the row; so when a key has several statements in a batch, the batch
// takes the claim first (`claim`, a prepared statement of the key), or a grant behind a release in
// it would wait for the claim while holding the row, and another node's grant hold the claim while
// waiting for the row. The exception is a release or renew of a multi-key group's handle, which
// locks the group's keys (in key order) when it reaches its own key; should that close a cycle,
// PostgreSQL breaks it after its deadlock_timeout and the batch it rolled back runs its statements
// alone.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

class CommitBatcher {
 public:
  // The bound of one batch. Count: 64 statements take about as long for the database to run
  // as one commit's flush (some 30-50 us each against 1-3 ms), so a bigger batch would mostly
  // add latency, and its first rows would stay locked that much longer. Bytes: a statement
  // is its key (at most 1024 bytes), a handle and a few numbers; 64 KiB lets 64 typical ones
  // go and some 50 of the longest keys, so one batch's text stays within a socket buffer.
  static constexpr std::size_t kMaxOps = 64;
  static constexpr std::size_t kMaxBytes = 64 * 1024;
  // How long a leader holds a batch for the grant attempt a hand-over woke: a thread's wake-up
  // on a busy machine, a fraction of a commit.
  static constexpr std::chrono::microseconds kFollowerWaitUs{500};

  // A statement's set form (see Set statements): `set` takes each parameter of `single` as an
  // array over the calls, in their order, and `answer` gives the call at `row` (from 0) its
  // share of the set statement's rows, or none when the call must run alone.
  struct SetForm {
    std::string single;
    std::string set;
    std::function<std::optional<Rows>(const Rows& all, int row)> answer;
  };

  // `settle` runs before each batch is sent (hold_rows.h: unknown outcomes first); an error
  // answers every statement of the batch with it, unsent.
  // `claim`: the prepared statement that takes a key's claim ($1 the key).
  CommitBatcher(PgPool& pool, std::size_t lanes, std::string claim, std::function<Status()> settle,
                std::vector<SetForm> sets = {});
  CommitBatcher(const CommitBatcher&) = delete;
  CommitBatcher& operator=(const CommitBatcher&) = delete;

  struct Outcome {
    Result<Rows> rows;
    // The batch rolled back for a reason that need not be this statement's: run it alone.
    bool alone = false;
  };
  // Runs prepared statement `name` (one that writes) on `key` in the next batch of its lane.
  // `queued`, if set, marks a hand-over: called once the statement is queued, it wakes the
  // caller whose statement on the same key should follow it (see Hand-over).
  Outcome run(std::string_view key, const std::string& name, const Params& params,
              const std::function<void()>& queued = {});
  // As run(), without a thread waiting for the answer: `answered` gets the outcome (and the
  // statement's parameters, for a statement to run again alone) once, on the
  // thread that ran the batch. A lane whose next statement has no caller waiting to lead it is
  // led by a job given to `spawn` (set_spawn: REQUIRED before the first call), so one thread
  // hand-over serves a batch rather than each of its statements.
  void run_async(std::string_view key, const std::string& name, Params params,
                 std::function<void(Outcome, const Params&)> answered);
  // Where run_async's leaders run (an executor's submit).
  void set_spawn(std::function<void(std::function<void()>)> spawn) { spawn_ = std::move(spawn); }

  std::uint64_t batches() const { return batches_.load(); }
  // Statements waiting in the lanes for a batch (not those in flight).
  std::size_t queued() const;
  std::uint64_t statements() const { return statements_.load(); }
  // Set statements sent, the calls they carried, and those of them answered `alone`.
  std::uint64_t set_statements() const { return set_statements_.load(); }
  std::uint64_t set_calls() const { return set_calls_.load(); }
  std::uint64_t set_alone() const { return set_alone_.load(); }

 private:
  struct Op {
    std::string_view key;
    const std::string* name;
    const Params* params;
    std::size_t bytes;
    bool hand_over;
    std::optional<Outcome> outcome;
    std::condition_variable cv;
    // run_async: the answer's taker, and the key and parameters the statement owns.
    std::function<void(Outcome, const Params&)> answered;
    std::string owned_key;
    Params owned_params;
  };
  // Answers of run_async's statements, given once the lane has gone on (outside its lock).
  using Answers = std::vector<std::pair<std::unique_ptr<Op>, Outcome>>;
  struct Lane {
    std::mutex mu;
    std::deque<Op*> queue;
    bool busy = false;
    std::condition_variable arrived;  // a statement was queued (a leader may wait for one)
  };
  // REQUIRES: lane.mu held. A hand-over among the first kMaxOps queued statements whose
  // follower has not queued yet.
  static bool awaits_follower(const Lane& lane);
  // REQUIRES: `lock` holds lane.mu, lane.busy set by this leader. Sends the lane's next batch
  // and answers its statements: a waiting caller through its `outcome`, a run_async one in the
  // answers returned. Then hands the lane on (hand_on).
  Answers lead(Lane& lane, std::unique_lock<std::mutex>& lock);
  // REQUIRES: lane.mu held, the lane not busy. Wakes the caller of the next statement to lead,
  // or, when nobody waits for it (run_async), gives a leader job to spawn_.
  void hand_on(Lane& lane);
  // A leader job's body (run_async), and the answers it gives.
  void lead_job(Lane& lane);
  static void give(Answers& answers);
  // Sends one batch and answers each of its statements (in the order of `batch`).
  std::vector<Outcome> send(const std::vector<Op*>& batch);

  PgPool& pool_;
  const std::string claim_;
  std::function<Status()> settle_;
  std::vector<SetForm> sets_;
  std::function<void(std::function<void()>)> spawn_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<std::uint64_t> batches_{0}, statements_{0};
  std::atomic<std::uint64_t> set_statements_{0}, set_calls_{0}, set_alone_{0};
};

}  // namespace holdfast::pg
