// PgService: the LockService of a scale-out node. The locks, tokens, rule set and rate
// windows live in one PostgreSQL database shared by every node; the node itself keeps only
// what is about its own connections (blocked acquirers, which connection owns session holds)
// and caches (the compiled rule set, a count of holds for /metrics).
//
// Every call applies the embedded service's checks in the same order (rules, validation, rate
// limit, the operation) and answers with the same Results. Each lock operation is one
// conditional statement (store/postgres/hold_rows.h); a call returns only after it committed,
// so last_sequence()/durable_sequence() are 0. Calls block: the front ends run them on the
// BlockingExecutor, one at a time per connection; a blocking acquire waits inside acquire().
//
// Lifecycle:
//  1. start(): lock the data dir (its LOCK file, as the embedded store does), migrate the
//     schema, connect the pool, free the session holds of this data dir's previous
//     incarnation (it is dead: we hold its lock), register a fresh node row, load the rule
//     set, start the LISTEN thread and the housekeeper. Any failure is returned and the node
//     must not serve.
//  2. serve: see pg_acquire.cc for how a blocked acquire waits across nodes.
//  3. end_session(s): the connection's waiters wake and answer UNAVAILABLE; its session holds
//     are freed (and their keys notified) if it had any.
//  4. stop(): every blocked call wakes with UNAVAILABLE, this node's session holds are freed
//     and its row removed, the threads stop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "auth/rule_set.h"
#include "server/lock_service.h"
#include "server/pg_housekeeper.h"
#include "server/pg_waiters.h"
#include "store/postgres/cluster_rows.h"
#include "store/postgres/hold_rows.h"
#include "store/postgres/listener.h"
#include "store/postgres/pg_pool.h"
#include "store/wal/file_system.h"

namespace holdfast {

struct PgServiceOptions {
  std::string url;                   // postgres://...
  std::string data_dir;              // holds node.lock and node-id
  std::string node_name;             // shown in holdfast_nodes (e.g. the RESP address)
  std::size_t pool_size = 8;         // connections per node
  Millis session_grace_ms = 10'000;  // a silent node's session holds live this long
  Millis heartbeat_ms = 1'000;       // capped to a third of the grace
  Millis recheck_ms = 250;           // a waiting head re-asks at least this often
  Millis sweep_ms = 5'000;
  Millis max_lease_ms = kMaxLeaseMs;
  std::int64_t acquire_per_user_per_hour = 0;  // 0: no limit
};

class PgService final : public LockService {
 public:
  explicit PgService(PgServiceOptions options);
  ~PgService() override;
  PgService(const PgService&) = delete;
  PgService& operator=(const PgService&) = delete;

  Status start();
  void stop();
  void begin_shutdown() override { stop(); }

  Result<AcquireOutcome> acquire(const Caller& caller, const AcquireArgs& args,
                                 WaiterClient* client) override;
  Result<RenewOutcome> renew(const Caller& caller, std::string_view key, std::string_view handle,
                             Millis ttl_ms) override;
  Result<ReleaseOutcome> release(const Caller& caller, std::string_view key,
                                 std::string_view handle) override;
  Result<StatusView> status(const Caller& caller, std::string_view key) override;
  Result<ListPage> list(const Caller& caller, std::string_view match, std::string_view cursor,
                        std::size_t count) override;
  Result<AcquireOutcome> assign(const Caller& caller, const AssignArgs& args,
                                WaiterClient* client) override;
  Result<HoldState> transfer(const Caller& caller, std::string_view key, std::string_view to_id,
                             std::string_view from_id) override;
  Result<ReleaseOutcome> unassign(const Caller& caller, std::string_view key,
                                  std::optional<std::string_view> holder_id) override;
  Result<HolderView> holder(const Caller& caller, std::string_view key) override;

  Result<bool> set_rule_set(const Caller& caller, std::string_view toml) override;
  Result<std::optional<RuleSetPut>> get_rule_set(const Caller& caller) override;
  Status delete_rule_set(const Caller& caller, std::string_view name) override;

  void cancel_waiter(WaiterId) override {}  // blocked calls wait on their own thread
  void end_session(SessionId session) override;

  bool blocking() const override { return true; }
  std::uint64_t last_sequence() const override { return 0; }
  std::uint64_t durable_sequence() const override { return 0; }
  ServiceStats stats() const override;

  std::int64_t node_id() const { return node_id_; }

 private:
  using TimePoint = LocalWaiters::TimePoint;

  struct Counters {
    std::atomic<std::uint64_t> grants{0}, releases{0}, expiries{0}, timeouts{0}, renewals{0},
        writes{0};
  };
  // One blocking or one-shot grant attempt loop, shared by acquire and assign (pg_acquire.cc).
  struct Attempt;
  Result<pg::Grant> run_grant(const Caller& caller, Attempt& attempt);
  std::optional<Error> charge_attempt(const Caller& caller, Millis timeout_ms, TimePoint deadline);
  TimePoint next_try(const pg::Grant& seen) const;

  std::optional<Error> gate(const Caller& caller, LockOperation op, std::string_view key) const;
  Millis cap_ttl(Millis ttl) const {
    return ttl > options_.max_lease_ms ? options_.max_lease_ms : ttl;
  }
  Error store_error(Error e) const;
  // `r` with a database failure turned into the UNAVAILABLE a caller sees (and logged).
  template <typename T>
  Result<T> db(Result<T> r) const {
    if (!r.ok()) return store_error(std::move(r).error());
    return r;
  }
  void keys_freed(const std::vector<std::string>& keys);
  void on_notify(const std::string& channel, const std::string& payload, int sender_pid);
  void rules_version_seen(std::int64_t version);
  Status reload_rules();
  Status claim_data_dir();

  const PgServiceOptions options_;
  std::unique_ptr<pg::PgPool> pool_;
  std::unique_ptr<pg::HoldRows> holds_;
  std::unique_ptr<pg::ClusterRows> cluster_;
  std::unique_ptr<pg::Listener> listener_;
  std::unique_ptr<PgHousekeeper> housekeeper_;
  LocalWaiters waiters_;
  std::int64_t node_id_ = 0;
  std::unique_ptr<wal::FileLock> dir_lock_;
  std::atomic<bool> stopped_{false};

  // The compiled rule set and the database version it came from. Reloads (notification,
  // housekeeper, this node's own pushes) serialise on reload_mu_; readers copy the pointer.
  mutable std::mutex rules_mu_;
  std::shared_ptr<const RuleSet> rules_;
  std::int64_t rules_version_ = 0;
  std::mutex reload_mu_;

  std::atomic<std::int64_t> held_{0};
  mutable Counters counters_;
};

}  // namespace holdfast
