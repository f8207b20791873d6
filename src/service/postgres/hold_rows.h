// HoldRows: every lock operation of docs/reference.md section 2 as ONE conditional SQL statement on
// holdfast_holds (autocommit: the statement is the transaction; with group commit on, the grant
// attempt, release and renew by handle share a transaction with other callers' statements,
// pg_batch.h, each answered as if it had run alone). The database decides:
//
//  - A key is free when it has no row or its row's lease has ended by holdfast_now_ms(), the
//    database clock, and then its lock_delay_ms too (docs/lock-kinds.md, "Lock-delay"). No
//    node's clock is ever compared with a lease. Release, unassign and the end of a session do
//    not delete the row: they end its lease now, keeping its last token (a release also sets
//    lock_delay_ms to 0; the end of a session keeps it).
//  - Grants are INSERT ... ON CONFLICT DO UPDATE ... WHERE <free or re-take>: two nodes racing
//    for one key serialise on the row (READ COMMITTED re-checks the WHERE against the winner's
//    committed row), so exactly one wins.
//  - Renew and release are conditional on the handle (and a live lease); transfer and unassign
//    on the holder id.
//  - Every statement that frees a key also runs pg_notify('holdfast_keys', key) in the same
//    transaction when some node has registered waiters for the key (holdfast_waits), so those
//    waiters hear of it when (and only if) it commits. A node registers a key BEFORE its first
//    waiter's first attempt. The freeing statement looks for registrations AFTER it updated
//    (and so locked) the key's row, with a fresh snapshot: holdfast_keys_waited() (once per
//    statement, for every key it freed; holdfast_key_waited() for one key in the functions) is
//    a VOLATILE plpgsql function, which under READ COMMITTED takes a new snapshot per query.
//    Then either the registration committed before that look (and is seen: notify), or after
//    it, and so the waiter's first attempt came after the row update: it waits on the row lock
//    and sees the key freed, or finds it free. (An EXISTS sub-select in the statement itself would
//    use the snapshot from the statement's START: a release that waited for the row lock, held by
//    that very first attempt failing, would miss a registration that committed meanwhile, and the
//    waiter would hear of the free key only at its periodic re-check.) NOTIFY takes a cluster-wide
//    lock at commit, so releases nobody waits for skip it.
//
// Tokens come from the one sequence holdfast_tokens. Per key they must strictly increase, so a
// grant draws its token only while it holds the key's row lock: in ON CONFLICT DO UPDATE SET
// and UPDATE SET, which PostgreSQL evaluates after locking the row (and re-evaluates if the row
// changed meanwhile). Only the first grant of a key without a row draws its token before
// inserting, and a freed row is deleted (sweep_free) only kFreeRowRetentionMs after its lease
// ended, far longer than any statement may run (kStatementTimeoutMs, set on every pooled
// connection): no grant can insert a token drawn before the key's last hold. Losing
// statements burn numbers, so tokens have gaps, never repeats. Grants of different keys that
// overlap in time may commit out of token order; a grant that completes before another starts
// always has the smaller token.
//
// Shared and semaphore holds (docs/lock-kinds.md) are rows of holdfast_members, one per grant;
// the key's holdfast_holds row then stands for the group (mode 1 or 2) and its lease ends with
// the group's last lease, so the single-hold statements above see the key busy and never match
// a member. Every change of a key's members locks that row first: grants of every mode serialise
// on it, and tokens drawn under it keep increasing per key. A member grant is a plpgsql function
// (schema.cc, holdfast_grant_member) run as one statement; it refuses to jump the key's queue
// across nodes (holdfast_queue: every blocked shared or semaphore request, and an exclusive one
// that saw the key held shared, has a row; a node's grant waits while another node has a row
// older than this node's oldest).
//
// A multi-key group (group_rows.cc, schema.cc holdfast_grant_group) is one transaction that
// locks the rows of all its keys in key order before it changes any; release and renew by
// handle lock a group's rows the same way, and every other statement that changes several
// rows (the session frees, the sweep) locks them in key order first. So no two transactions
// wait for each other's rows in a cycle, and PostgreSQL never has to break a deadlock.
//
// Unknown outcomes. A write whose outcome is unknown (pg_conn.h: no answer by the deadline, a
// broken connection, a commit that may not be on the standby) is answered STORE_UNAVAILABLE
// with outcome=unknown. Before this node runs any other statement (so before it answers
// anything about that key again), it settles every such write from the database:
//  - a grant (its handle was fresh) is withdrawn by releasing its handle: if it committed, no
//    hold is left that nobody knows the handle of. The release takes the key's claim first, in
//    the same transaction: a grant still running (a commit waiting for a synchronous standby,
//    unseen by others, on a connection the node closed) holds it until it ends;
//  - a release by handle is done again: its caller meant the key to be free;
//  - the end of a connection's session holds (whatever made it fail) is done again, so they
//    do not outlive the connection.
// Each is a no-op when there is nothing left to do. Other writes (renew, assign, transfer,
// unassign, the Redis idiom's, rule changes) change rows the node keeps no copy of: its next
// answer reads whatever the database has. Until the database answers, every call fails with
// UNAVAILABLE; a transaction (PgPool::begin) settles before it begins.
//
// The SQL text of each statement is in hold_rows.cc next to the function that runs it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/hold.h"
#include "core/lock_request.h"
#include "service/postgres/pg_batch.h"
#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

inline constexpr char kKeysChannel[] = "holdfast_keys";
inline constexpr Millis kStatementTimeoutMs = 10'000;
inline constexpr Millis kFreeRowRetentionMs = 60'000;
static_assert(kFreeRowRetentionMs > 2 * kStatementTimeoutMs, "see Tokens above");

// A mode as the schema numbers it: 0 exclusive, 1 shared, 2 semaphore.
std::int64_t mode_number(LockMode m);
LockMode mode_of_number(std::int64_t m);  // and back (anything else: exclusive)

// A grant of a handle hold (acquire, tryAcquire, re-take).
struct GrantRequest {
  std::string_view key;
  Handle handle;  // fresh, drawn by the caller
  std::string_view held_by;
  std::optional<std::string_view> owner;
  Millis ttl_ms = 0;  // already capped
  Scope scope = Scope::kLease;
  std::int64_t node_id = 0;  // session holds: whose connection
  std::uint64_t session = 0;
  Millis lock_delay_ms = 0;  // docs/lock-kinds.md, "Lock-delay"
};

// What a grant statement answered.
struct Grant {
  bool granted = false;
  bool refreshed = false;  // assign: the same holder's hold was refreshed (token kept)
  HoldState hold;          // when granted
  Millis db_now = 0;       // the database clock when the statement ran
  // When not granted: the current hold's lease end as the statement saw it (none: unknown
  // or never ends). Waiters time their next attempt by it.
  std::optional<Millis> holder_lease_end;
  // When not granted: the mode of the live hold in the way (a group's for a shared or
  // semaphore key) and a semaphore's permits.
  LockMode holder_mode = LockMode::kExclusive;
  std::uint32_t holder_permits = 0;
  // A member grant refused because the key is of another kind: 0 a lock, else the permits of
  // the semaphore it is.
  std::optional<std::uint32_t> other_kind;
};

// A grant of a shared or semaphore hold: the fields of GrantRequest plus the mode, a
// semaphore's permits and its take (core/lock_request.h; the key is the grant's).
struct MemberRequest {
  GrantRequest grant;
  KeyRequest shape;
  std::optional<std::int64_t> queue_seq;  // the caller's holdfast_queue row, if queued
};

// A multi-key group (docs/lock-kinds.md, "Several keys at once"): the grant's fields (its key
// unused) and each key with its mode, sorted by key and distinct.
struct GroupRequest {
  GrantRequest grant;
  std::vector<KeyRequest> keys;
};

// What holdfast_grant_group answered: every key's hold (in key order), or the key that
// refused: busy (holder_lease_end: when a hold in the way ends, if known) or of another kind.
struct GroupGrant {
  bool granted = false;
  std::vector<HoldState> holds;
  Millis db_now = 0;
  std::string key;
  std::optional<Millis> holder_lease_end;
  std::optional<std::uint32_t> other_kind;
};

class HoldRows {
 public:
  explicit HoldRows(PgPool& pool) : pool_(pool) {}
  // The statements to prepare on every pooled connection.
  static std::vector<Statement> statements();

  // Grants the key when it is free (or its lease ended), or re-takes it when the caller's
  // heldBy and non-empty owner match the current handle hold.
  // `batched` false: in a transaction of its own even with group commit on.
  Result<Grant> acquire(const GrantRequest& r, bool batched = true);
  // acquire() in the next batch without a thread waiting for it: `done` gets the answer on the
  // thread that ran the batch (see CommitBatcher::run_async). REQUIRES: batching() and
  // set_spawn(); not on a thread with a transaction open.
  void acquire_async(const GrantRequest& r, std::function<void(Result<Grant>)> done);
  // release_handle() likewise, without a hand-over.
  void release_handle_async(std::string_view key, std::string_view handle,
                            std::function<void(Result<std::vector<std::string>>)> done);
  // Only the re-take: never takes a free key (a newcomer behind this node's own waiters).
  Result<Grant> retake(const GrantRequest& r);
  // The Redis idiom (docs/redis-locks.md): a grant of a free key only (never a re-take, as SET
  // NX); the replacement of a live handle hold of the same principal, whatever its owner (a
  // plain SET); a new lease end for the hold with `token` (PEXPIRE), none when it is gone; and
  // the freeing of a key whoever (or, with `held_by`, only that principal) holds it (DEL),
  // answering the freed keys.
  Result<Grant> acquire_free(const GrantRequest& r);
  Result<Grant> take_over(const GrantRequest& r);
  Result<std::optional<Millis>> extend(std::string_view key, Millis amount, bool absolute,
                                       std::uint64_t token);
  Result<std::vector<std::string>> free_key(std::string_view key,
                                            std::optional<std::string_view> held_by);
  // Assigns a free key to holder_id, or refreshes the lease of the same holder's hold (token,
  // heldBy and acquiredAt kept). ttl none: never expires.
  Result<Grant> assign(std::string_view key, std::string_view held_by, std::string_view holder_id,
                       std::optional<Millis> ttl_ms, Millis lock_delay_ms = 0);
  // Only the refresh.
  Result<Grant> refresh(std::string_view key, std::string_view holder_id,
                        std::optional<Millis> ttl_ms);

  // A group grant, all or nothing, as one transaction (schema.cc, holdfast_grant_group): every
  // key's row locked in key order, then each key granted as a single acquire would, or none.
  Result<GroupGrant> grant_group(const GroupRequest& r);
  // Release and renew by key and handle, of any mode: every live hold of the handle, which is
  // the key's one hold or, for a group, the hold on each of its keys. Release answers the keys
  // freed (none: the handle holds nothing on key); renew the new lease end.
  // `hand_over` (group commit only): called once the release is queued, to wake the key's
  // next waiter so that its grant attempt follows the release (pg_batch.h, "Hand-over").
  // `*handed_over` then tells whether it did: the release committed in a batch, after that
  // call, so every attempt the call led to runs after it.
  Result<std::vector<std::string>> release_handle(std::string_view key, std::string_view handle,
                                                  const std::function<void()>& hand_over = {},
                                                  bool* handed_over = nullptr);
  Result<std::optional<Millis>> renew_handle(std::string_view key, std::string_view handle,
                                             Millis ttl_ms);

  // The multi-key groups holding key: the handle and heldBy of each live hold on key whose
  // handle also holds another key (DEL and PEXPIRE act on such a hold's whole group).
  struct GroupOnKey {
    std::string handle;
    std::string held_by;
  };
  Result<std::vector<GroupOnKey>> groups_on(std::string_view key);

  Result<bool> release(std::string_view key, std::string_view handle);
  // The live hold of key (handle left null), if any, and the database clock when it was read
  // (replies that count from "now", PTTL and PEXPIRE, use it: never this node's clock).
  Result<std::optional<HoldState>> find(std::string_view key, Millis* db_now = nullptr);
  // Live holds with key > after and key >= from, in key order, at most `limit` (handles null).
  Result<std::vector<HoldState>> scan(std::string_view after, std::string_view from,
                                      std::int64_t limit);
  // Moves a live assigned hold from `from_id` to `to_id` with a new token; none when the key
  // is not assigned to from_id.
  Result<std::optional<HoldState>> transfer(std::string_view key, std::string_view to_id,
                                            std::string_view from_id, std::string_view held_by);
  // Frees a live assigned hold (of holder_id, when given). False when nothing matched.
  Result<bool> unassign(std::string_view key, std::optional<std::string_view> holder_id);

  // Shared and semaphore holds. grant_member: the grant (or, retake_only, only the re-take of
  // the caller's own hold of the mode); answers the new member with mode, permits and limit.
  Result<Grant> grant_member(const MemberRequest& r, bool retake_only);
  // A blocked request joins the key's queue across nodes (its row's seq) or leaves it.
  Result<std::int64_t> queue_join(std::string_view key, std::int64_t node_id, LockMode mode,
                                  std::uint32_t permits);
  Status queue_leave(std::int64_t seq);
  Result<bool> release_member(std::string_view key, std::string_view handle);
  // The live members of a group key, oldest first (handles null), with its mode and limit.
  Result<std::vector<HoldState>> members(std::string_view key, LockMode mode,
                                         std::uint32_t permits);
  // Every member of key at once, when held_by is none or holds them all (DEL, PEXPIRE).
  Result<bool> free_group(std::string_view key, std::optional<std::string_view> held_by);
  Result<bool> extend_group(std::string_view key, Millis at,
                            std::optional<std::string_view> held_by);

  // Session holds (single and member): the keys freed. A failure leaves the end of the
  // session to settle (see "Unknown outcomes").
  Result<std::vector<std::string>> end_session(std::int64_t node_id, std::uint64_t session);
  Result<std::vector<std::string>> free_node_sessions(std::int64_t node_id);
  // The session holds (single and member) that the session-liveness rule lets `judge` free
  // now (schema_liveness.cc: holdfast_session_lapsed()).
  Result<std::vector<std::string>> free_dead_sessions(std::int64_t judge, Millis grace_ms,
                                                      Millis gap_ms);
  // Deletes rows whose lease ended over kFreeRowRetentionMs ago; how many.
  Result<std::int64_t> sweep_free();
  Result<std::int64_t> count_live();
  // While a lock-delay keeps the key closed (its lease ended, its delay has not): the instant
  // it opens, by the database clock; else 0.
  Result<Millis> closed_until(std::string_view key);

  // holdfast_waits (and holdfast_queue, in forget_waits): this node has callers queued for key
  // (generation: the queue's incarnation, so an unregister that arrives after a newer register
  // leaves it alone).
  Status register_wait(std::string_view key, std::int64_t node_id, std::uint64_t generation);
  Status unregister_wait(std::string_view key, std::int64_t node_id, std::uint64_t generation);
  // Whether a node other than node_id has registered callers waiting for key (a read).
  Result<bool> others_wait(std::string_view key, std::int64_t node_id);
  // Every registration of node_id, or (none) of nodes that no longer have a row.
  Status forget_waits(std::optional<std::int64_t> node_id);

  // Group commit (pg_batch.h) for the hot statements: the grant attempt (acquire), release and
  // renew by handle then share transactions across `lanes` lanes. Off (0) by default; set
  // before serving.
  void batch_commits(std::size_t lanes);
  bool batching() const { return batcher_ != nullptr; }
  // Where the batches of the *_async calls are led from (an executor's submit). Set with
  // batch_commits, before serving.
  void set_spawn(std::function<void(std::function<void()>)> spawn);
  // Batches sent and the statements they carried (0 when off).
  std::uint64_t batches() const { return batcher_ ? batcher_->batches() : 0; }
  std::uint64_t batched_statements() const { return batcher_ ? batcher_->statements() : 0; }
  std::size_t queued() const { return batcher_ ? batcher_->queued() : 0; }
  // Of the batched statements: the set statements sent, the calls they carried, and those of
  // them that ran alone instead (pg_batch.h, "Set statements").
  std::uint64_t set_statements() const { return batcher_ ? batcher_->set_statements() : 0; }
  std::uint64_t set_calls() const { return batcher_ ? batcher_->set_calls() : 0; }
  std::uint64_t set_alone() const { return batcher_ ? batcher_->set_alone() : 0; }

  // Settles every write whose outcome is unknown (see "Unknown outcomes"); UNAVAILABLE while
  // the database does not answer. Every call above does it first.
  Status settle();
  // The keys that settling freed (this node's waiters may take them). Set before serving.
  void on_freed(std::function<void(const std::vector<std::string>&)> fn) {
    on_freed_ = std::move(fn);
  }
  std::size_t doubts() const;

 private:
  // A write whose outcome may be unknown, and how to settle it.
  struct Doubt {
    enum Kind { kNone, kHandle, kSession } kind = kNone;
    std::string key, handle;  // kHandle: release this handle on this key
    std::int64_t node = 0;    // kSession: end this session's holds
    std::uint64_t session = 0;
    static Doubt on_handle(std::string_view key, std::string_view handle);
    static Doubt on_session(std::int64_t node, std::uint64_t session);
  };
  // Settles, then runs the statement; records `about` when its outcome is unknown.
  Result<Rows> run(const std::string& statement, const Params& params, const Doubt& about);
  Result<Rows> run(const std::string& statement, const Params& params);
  // As run(), in the next batch of the key's lane when batching is on and the calling thread
  // has no transaction open; a statement whose batch rolled back runs again alone.
  // `queued`: a hand-over (CommitBatcher::run); `*in_batch`: the answer came from a batch that
  // committed, rather than from running alone.
  Result<Rows> run_batched(std::string_view key, const std::string& statement, const Params& params,
                           const Doubt& about, const std::function<void()>& queued = {},
                           bool* in_batch = nullptr);
  // What a batched statement answers its caller: run again alone when its batch rolled back;
  // a write whose outcome is unknown recorded first.
  Result<Rows> batched_answer(const std::string& statement, const Params& params,
                              const Doubt& about, CommitBatcher::Outcome out);
  // run_batched() without waiting: `done` gets what it would have returned.
  void run_batched_async(std::string_view key, const std::string& statement, Params params,
                         Doubt about, std::function<void(Result<Rows>)> done);
  void doubt(Doubt d);
  Result<std::vector<std::string>> end_session_now(std::int64_t node_id, std::uint64_t session);
  Result<std::vector<std::string>> freed_keys(const std::string& statement, const Params& params,
                                              const Doubt& doubt);
  Result<std::vector<std::string>> freed_keys(const std::string& statement, const Params& params);
  // freed_keys of a statement on single holds, then of one on members.
  Result<std::vector<std::string>> freed_with_members(const std::string& statement,
                                                      const Params& params,
                                                      const std::string& members_statement,
                                                      const Params& member_params);

  PgPool& pool_;
  std::unique_ptr<CommitBatcher> batcher_;
  std::function<void(const std::vector<std::string>&)> on_freed_;
  mutable std::mutex doubts_mu_;
  std::deque<Doubt> doubts_;
  std::atomic<bool> has_doubts_{false};
  std::mutex settle_mu_;  // one thread settles at a time; under it:
  std::chrono::steady_clock::time_point retry_settling_at_;
  std::string last_settle_error_;
};

}  // namespace holdfast::pg
