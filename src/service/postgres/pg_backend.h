// PgBackend: the LockBackend of a scale-out node. The locks, tokens, rule set and rate windows
// live in one PostgreSQL database shared by every node; the node itself keeps only what is
// about its own connections (blocked acquirers, which connection owns session holds) and a
// count of holds for /metrics.
//
// Each lock operation is one conditional statement (hold_rows.h); the hot ones share commits
// (pg_batch.h). Calls run on the BlockingExecutor's threads, one at a time per connection (the
// policy issues nothing more for a session until its call finishes), and a blocking acquire
// waits there; the answer is handed back to the loop thread and delivered by dispatch(). A
// try-acquire or release with nothing to wait for but its statement (try_now, release) queues
// the statement from the loop instead, and is answered by the thread that runs its batch. Every
// answer is committed in the database before it is delivered, so nothing waits for a log here.
//
// Lifecycle:
//  1. start(): lock the data dir (its LOCK file, as the embedded store does), find the primary
//     (pg_primary.h), migrate the schema, connect the pool and the heartbeat's own connection,
//     read the database's replication (pg_replication.h; without synchronous replication a
//     warning, or with requireSyncReplication a refusal to start), free the session holds of
//     this data dir's previous incarnation (it is dead: we hold its lock), register a fresh
//     node row, load the rule set, start the LISTEN thread, the heartbeat and the
//     housekeeper. Any failure is returned and the node must not serve.
//  2. serve: see pg_acquire.cc for how a blocked acquire waits across nodes.
//  3. end_session(s): the connection's waiters wake and answer UNAVAILABLE; its session holds
//     are freed (and their keys notified) if it had any.
//  4. stop() (or shutdown()): every blocked call wakes with UNAVAILABLE, this node's session
//     holds are freed and its row removed, the threads stop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/values/value_ops.h"
#include "service/backend.h"
#include "service/postgres/blocking_executor.h"
#include "service/postgres/cluster_rows.h"
#include "service/postgres/hold_rows.h"
#include "service/postgres/listener.h"
#include "service/postgres/pg_events.h"
#include "service/postgres/pg_heartbeat.h"
#include "service/postgres/pg_housekeeper.h"
#include "service/postgres/pg_pool.h"
#include "service/postgres/pg_primary.h"
#include "service/postgres/pg_replication.h"
#include "service/postgres/pg_waiters.h"
#include "service/postgres/value_rows.h"
#include "store/wal/file_system.h"

namespace holdfast {

struct PgBackendOptions {
  std::string url;                   // postgres://...
  std::string data_dir;              // holds node.lock and node-id
  std::string node_name;             // shown in holdfast_nodes (e.g. the RESP address)
  std::size_t pool_size = 8;         // connections per node
  Millis session_grace_ms = 10'000;  // a silent node's session holds live this long
  Millis heartbeat_ms = 1'000;       // capped to a fifth of the grace
  // Every database round trip answers within this or its connection is closed (pg_conn.h).
  Millis statement_deadline_ms = 3'000;
  // Refuse to start, and refuse writes, while the database does not replicate synchronously.
  bool require_sync_replication = false;
  // Group commit (pg_batch.h): lanes of batched grant attempts, releases and renews, each
  // with at most one transaction in flight; 0 sends each statement in its own transaction.
  std::size_t commit_lanes = 1;
  Millis recheck_ms = 250;  // a waiting head re-asks at least this often
  Millis sweep_ms = 5'000;
};

class PgBackend final : public LockBackend {
 public:
  // `wake` (thread-safe) asks the loop to call dispatch(): answers are ready.
  PgBackend(PgBackendOptions options, WakeLoop wake);
  ~PgBackend() override;
  PgBackend(const PgBackend&) = delete;
  PgBackend& operator=(const PgBackend&) = delete;

  Status start();
  // Idempotent; blocks until the node's threads have stopped.
  void stop();

  // All or nothing, as one database transaction (pg_groups.cc).
  Issued acquire_all(const Caller& caller, const AcquireAllArgs& args, Contention contention,
                     Charge charge, Completion& done) override;
  Issued acquire(const Caller& caller, const AcquireArgs& args, Contention contention,
                 Charge charge, Completion& done) override;
  Issued assign(const Caller& caller, const AssignArgs& args, Charge charge,
                Completion& done) override;
  Issued renew(const Caller& caller, const RenewArgs& args, Completion& done) override;
  Issued release(const Caller& caller, const ReleaseArgs& args, Completion& done) override;
  Issued status(const Caller& caller, std::string_view key, Completion& done) override;
  Issued list(const Caller& caller, std::string_view match, std::string_view after,
              std::size_t count, Completion& done) override;
  Issued transfer(const Caller& caller, const TransferArgs& args, Completion& done) override;
  Issued unassign(const Caller& caller, const UnassignArgs& args, Completion& done) override;
  Issued holder(const Caller& caller, std::string_view key, Completion& done) override;
  Issued check(const Caller& caller, const CheckArgs& args, Completion& done) override;
  Issued set_value(const Caller& caller, const SetArgs& args, Charge charge,
                   Completion& done) override;
  Issued get_value(std::string_view key, Completion& done) override;
  Issued delete_keys(std::span<const std::string_view> keys,
                     std::optional<std::string_view> only_held_by,
                     std::span<const std::uint8_t> value_writable, Completion& done) override;
  Issued expire(const ExpireArgs& args, Millis max_lease_ms, const KeyAccess& access,
                Completion& done) override;
  Issued count_held(std::span<const std::string_view> keys, Completion& done) override;
  Issued value(const Caller& caller, const ValueRequest& request, const KeyAccess& access,
               Completion& done) override;
  Issued put_rule_set(const RuleSetPut& rules, Completion& done) override;
  Issued get_rule_set(Completion& done) override;
  Issued delete_rule_set(std::string_view name, Completion& done) override;
  void on_rule_set_changed(std::function<void(const std::optional<RuleSetPut>&)> fn) override {
    rules_changed_ = std::move(fn);
  }

  void complete(Completion& done, Result<Answer> result) override {
    done.finish(std::move(result));
  }
  // Every call waits for the database (kWaiting): a script could not have its answers.
  // A script runs inside atomically(), where every call runs inline on the loop.
  void end_session(SessionId session) override;
  void shutdown() override { stop(); }
  // On the loop: begins a database transaction on a connection of its own and, until it
  // commits, runs every call made on the loop inside it (run() finishes each before returning).
  Status atomically(const std::function<void()>& body) override;
  void dispatch() override;
  // Lease ends only matter to lock events (pg_events.h): the database's clock decides the rest.
  void advance() override;
  std::optional<Millis> next_deadline() const override;
  void set_event_sink(LockEventSink* sink) override;

  // Pub/sub across the nodes (docs/scale-out.md): publish() sends a message to the other nodes
  // (in order, from one thread); on_message() hears theirs, on the loop. A message that does
  // not fit in a notification is refused by publish_error() first.
  static std::optional<std::string> publish_error(std::string_view channel,
                                                  std::string_view message);
  void publish(std::string_view channel, std::string_view message);
  void on_message(std::function<void(std::string_view, std::string_view)> fn) {
    on_message_ = std::move(fn);
  }
  // Database answers come when they come: the loop sleeps until woken.
  ServiceStats stats() const override;

  std::int64_t node_id() const { return node_id_; }

 private:
  using TimePoint = LocalWaiters::TimePoint;

  struct Counters {
    std::atomic<std::uint64_t> grants{0}, releases{0}, expiries{0}, timeouts{0}, renewals{0},
        writes{0};
    // Of `grants`, those of shared and of semaphore holds; the rest are exclusive.
    std::atomic<std::uint64_t> shared_grants{0}, semaphore_grants{0};
  };
  // One blocking or one-shot grant attempt loop, shared by acquire and assign (pg_acquire.cc).
  struct Attempt;
  // A blocked call's row in holdfast_queue, if it has one (pg_members.cc): join() takes it,
  // leave() (or the destructor) gives it up unless a grant already deleted it (forget()).
  class QueueSeat {
   public:
    explicit QueueSeat(PgBackend& node) : node_(node) {}
    ~QueueSeat() { leave(); }
    QueueSeat(const QueueSeat&) = delete;
    QueueSeat& operator=(const QueueSeat&) = delete;
    Status join(std::string_view key, LockMode mode, std::uint32_t permits);
    std::optional<std::int64_t> seq() const { return seq_; }
    void forget() { seq_.reset(); }
    void leave();

   private:
    PgBackend& node_;
    std::optional<std::int64_t> seq_;
  };
  // After a grant statement refused (`seen`): a key of another kind than `wanted` (0 a lock,
  // else a semaphore's permits) marks `seen` as a conflict; a blocked exclusive request that
  // finds the key held shared takes its seat in the queue across nodes.
  Status kind_seen(pg::Grant& seen, bool blocking, std::uint32_t wanted, std::string_view key,
                   QueueSeat& seat);
  Result<Answer> do_acquire_member(const Caller& caller, const AcquireArgs& args, Millis timeout,
                                   Contention contention);
  // A shared or semaphore key's status, holder and list entries (pg_members.cc); `group` is
  // the key's row as found.
  Result<StatusView> group_status(StatusView s, const HoldState& group);
  // status's answer, inside run() (pg_backend.cc).
  Result<StatusView> status_of(const std::string& key);
  Result<std::vector<HoldState>> group_members(const HoldState& group);
  Result<pg::Grant> run_grant(const Caller& caller, Attempt& attempt);
  // Multi-key acquire (pg_groups.cc): the grant, and the wait for it.
  Result<Answer> do_acquire_all(const Caller& caller, const AcquireAllArgs& args,
                                Contention contention, Charge charge);
  Result<pg::GroupGrant> run_group_grant(const Caller& caller, const pg::GroupRequest& group,
                                         Millis timeout);
  static Handle next_handle();
  static Error waiter_gone();
  std::optional<Error> charge_attempt(const Principal& who, Charge charge);
  TimePoint next_try(const pg::Grant& seen) const;
  // After a refusal that saw a hold in the way ending at `lease_end` (database clock).
  TimePoint next_try(std::optional<Millis> lease_end, Millis db_now) const;

  // Runs `job` on an executor thread; its answer reaches `done` on the loop.
  Issued run(Completion& done, std::function<Result<Answer>()> job);
  // Runs `task` on the loop, from dispatch().
  void on_loop(std::function<void()> task);
  // This node's wall clock, for the lock events' own timers (pg_events.h); leases are judged
  // by the database's clock.
  static Millis wall_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  Error store_error(Error e) const;
  // `r` with a database failure turned into the UNAVAILABLE a caller sees (and logged).
  template <typename T>
  Result<T> db(Result<T> r) const {
    if (!r.ok()) return store_error(std::move(r).error());
    return r;
  }
  // The grant statement's terms for `args` by `caller`, whose held_by() is `held_by`.
  pg::GrantRequest grant_request(const Caller& caller, std::string_view held_by,
                                 const AcquireArgs& args);
  Result<Answer> do_acquire(const Caller& caller, const AcquireArgs& args, Contention contention,
                            Charge charge);
  // One attempt at an exclusive key that this node has no caller waiting for, outside a
  // transaction and with no rate to count: nothing in it blocks but the grant statement, which
  // goes to the commit batches with no thread waiting for it (HoldRows::acquire_async); its
  // answer is do_acquire's. None when the call is not such an attempt (do_acquire runs it).
  std::optional<Issued> try_now(const Caller& caller, const AcquireArgs& args,
                                Contention contention, Charge charge, Completion& done);
  // What a grant attempt answers, once its statement answered `r` (do_acquire, try_now).
  struct Granted {
    std::string key;
    Scope scope = Scope::kLease;
    bool session_scoped = false;
    Contention contention = Contention::kNil;
    Millis timeout_ms = 0;
  };
  Result<Answer> granted(const Caller& caller, const Granted& how, Result<pg::Grant> r);
  // What a release by handle answers, once its statement freed `released` (with the key
  // handed over to this node's next waiter, or not).
  Result<Answer> released(const std::string& key, Result<std::vector<std::string>> released,
                          bool handed_over);
  Result<Answer> do_assign(const Caller& caller, const AssignArgs& args, Charge charge);
  Result<Answer> do_list(std::string_view match, std::string after, std::size_t count);
  Result<Answer> do_transfer(std::string_view held_by, const TransferArgs& args);
  Result<Answer> do_unassign(const UnassignArgs& args);
  // The key's holder as the database has it now (holder and check).
  Result<HolderView> find_holder(const std::string& key);
  Result<Answer> do_set(const Caller& caller, const SetArgs& args, Charge charge);
  // DEL of a key held by multi-key groups (whose heldBy is only_held_by, if given): releases
  // each whole group. Answers whether any hold went.
  Result<bool> release_groups_on(std::string_view key,
                                 std::optional<std::string_view> only_held_by);
  Result<Answer> do_expire(const ExpireArgs& args, Millis max_lease_ms,
                           std::optional<std::string_view> only_held_by);
  Result<Answer> do_expire_group(const ExpireArgs& args, Millis max_lease_ms,
                                 std::optional<std::string_view> only_held_by,
                                 const HoldState& group, Millis db_now);
  void keys_freed(const std::vector<std::string>& keys);
  // DEL of one key's lock (pg_redis.cc): whether a hold went.
  Result<bool> delete_lock(const std::string& key, std::optional<std::string_view> only_held_by);

  // Typed values (pg_values.cc, value_rows.h).
  Result<Answer> do_value(const ValueRequest& r, std::optional<std::string_view> only_held_by);
  Result<Answer> get_del(const std::string& key, std::optional<std::string_view> only_held_by);
  // The EXPIRE family on a key holding a typed value; none when it holds none.
  Result<std::optional<Answer>> expire_value(const ExpireArgs& args, const KeyAccess& access);
  Result<bool> is_value(const std::string& key);
  // WRONGTYPE for a lock command (status, holder, check) on a key holding a typed value.
  std::optional<Error> wrong_type_if_value(const std::string& key) {
    auto typed = is_value(key);
    if (!typed.ok()) return std::move(typed).error();
    if (*typed) return wrong_type();
    return std::nullopt;
  }
  // What GET answers for the key's lock (none when not held).
  Result<std::optional<std::string>> lock_value_of(const pg::KeyRow& row, const std::string& key);
  // Inside a transaction, WRONGTYPE for a lock grant on a key holding a typed value, decided
  // before the grant's statement (whose error would abort the transaction).
  std::optional<Error> value_in_the_way(std::string_view key);
  // Runs `body` in a database transaction of its own, or in the one atomically() opened.
  Result<Answer> in_transaction(const std::function<Result<Answer>()>& body);
  void on_notify(const std::string& channel, const std::string& payload, int sender_pid);
  // A message another node published (pg_pubsub.cc).
  void relayed(const std::string& payload);
  void rules_version_seen(std::int64_t version);
  // Reads the stored rule set; when its version moved, hands it to the loop.
  Status reload_rules();
  Status claim_data_dir();
  // Reads the database's replication (pg_replication.h), logs a change.
  Status check_replication();
  // The write gate: an error while requireSyncReplication is on and the database is unsafe.
  std::optional<Error> replication_refusal() const;
  void primary_changed();

  const PgBackendOptions options_;
  WakeLoop wake_;
  std::unique_ptr<pg::Primary> primary_;
  std::unique_ptr<pg::PgPool> pool_;
  std::unique_ptr<pg::PgPool> heartbeat_pool_;
  std::unique_ptr<pg::ClusterRows> heartbeat_rows_;
  std::unique_ptr<pg::Heartbeat> heartbeat_;
  std::unique_ptr<pg::HoldRows> holds_;
  std::unique_ptr<pg::ClusterRows> cluster_;
  std::unique_ptr<pg::ValueRows> values_;
  std::unique_ptr<pg::Listener> listener_;
  std::unique_ptr<PgHousekeeper> housekeeper_;
  std::unique_ptr<pg::PgEvents> events_;
  std::function<void(std::string_view, std::string_view)> on_message_;
  LocalWaiters waiters_;
  BlockingExecutor executor_;
  bool inline_ = false;  // inside atomically(): calls run on the loop, in its transaction
  // The same, for the thread a call runs on: true only on the loop thread inside atomically(),
  // where every call runs inline in its transaction.
  static thread_local bool tx_open_;
  // In that transaction: keys claimed and seen holding no typed value (value_in_the_way).
  std::unordered_set<std::string> tx_lock_keys_;
  std::int64_t node_id_ = 0;
  std::unique_ptr<wal::FileLock> dir_lock_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> serving_{false};  // start() finished: the primary's changes reach waiters

  mutable std::mutex replication_mu_;
  bool replication_checked_ = false;
  pg::Replication replication_;
  std::function<void(const std::optional<RuleSetPut>&)> rules_changed_;

  // The database version of the rule set last handed to the loop; reloads (notification,
  // housekeeper, this node's own pushes) serialise on reload_mu_.
  std::mutex reload_mu_;
  std::int64_t rules_version_ = 0;

  // Work for the loop thread, handed over by executor, listener and housekeeper threads.
  std::mutex loop_mu_;
  std::vector<std::function<void()>> loop_tasks_;

  // Keys whose release found callers of another node waiting too, as last read (at most
  // kContestedTtl ago): a release hands such a key to no waiter of its own, and a waiter's
  // attempt on it runs outside the batches, where an attempt that waits for the row of a key
  // contested across nodes would hold up its lane (pg_batch.h).
  static constexpr std::chrono::milliseconds kContestedTtl{50};
  bool contested(const std::string& key, bool read);
  std::mutex contested_mu_;
  std::unordered_map<std::string, std::pair<bool, std::chrono::steady_clock::time_point>>
      contested_;
  std::atomic<std::int64_t> held_{0};
  std::atomic<std::int64_t> values_count_{0};  // refreshed by the housekeeper
  mutable Counters counters_;
};

}  // namespace holdfast
