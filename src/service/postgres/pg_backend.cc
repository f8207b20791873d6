#include "service/postgres/pg_backend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/glob.h"
#include "core/holder_check.h"
#include "core/list_cursor.h"
#include "service/postgres/pg_replication.h"
#include "service/postgres/schema.h"
#include "store/wal/data_dir.h"
#include "store/wal/format.h"

namespace holdfast {

namespace fs = std::filesystem;

PgBackend::PgBackend(PgBackendOptions options, WakeLoop wake)
    : options_(std::move(options)), wake_(std::move(wake)) {}

PgBackend::~PgBackend() { stop(); }

Issued PgBackend::run(Completion& done, std::function<Result<Answer>()> job) {
  if (inline_) {
    done.finish(job());
    return Issued::kApplied;
  }
  executor_.submit([this, &done, job = std::move(job)] {
    auto result = std::make_shared<Result<Answer>>(job());
    on_loop([&done, result] { done.finish(std::move(*result)); });
  });
  return Issued::kWaiting;
}

Status PgBackend::atomically(const std::function<void()>& body) {
  // Writes of unknown outcome are settled first: inside the transaction they would be undone
  // with it if it rolled back (hold_rows.h, "Unknown outcomes").
  if (auto st = holds_->settle(); !st.ok()) return store_error(std::move(st).error());
  auto tx = pool_->begin();
  if (!tx.ok()) return store_error(std::move(tx).error());
  inline_ = true;
  tx_open_ = true;
  tx_lock_keys_.clear();
  body();
  tx_open_ = false;
  tx_lock_keys_.clear();
  inline_ = false;
  if (auto st = (*tx)->commit(); !st.ok()) return store_error(std::move(st).error());
  return ok_status();
}

void PgBackend::on_loop(std::function<void()> task) {
  {
    std::lock_guard lock(loop_mu_);
    loop_tasks_.push_back(std::move(task));
  }
  if (wake_) wake_();
}

void PgBackend::dispatch() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(loop_mu_);
    tasks.swap(loop_tasks_);
  }
  for (auto& task : tasks) task();
}

// One server per data dir, whatever its store: the same LOCK file as the write-ahead log's.
// Holding it also proves that the node recorded in node-id (this dir's last node) is dead.
Status PgBackend::claim_data_dir() {
  wal::FileSystem& files = wal::posix_file_system();
  if (auto st = files.create_dir(options_.data_dir); !st.ok()) return st;
  auto attempt = files.lock_file(wal::join_path(options_.data_dir, wal::kLockFileName));
  if (!attempt.ok()) return std::move(attempt).error();
  if (!attempt->lock) {
    std::string message = "data dir " + options_.data_dir + " is in use by another holdfast server";
    if (attempt->holder_pid != 0) message += " (pid " + std::to_string(attempt->holder_pid) + ")";
    return Error(ErrorCode::kUnavailable, std::move(message));
  }
  dir_lock_ = std::move(attempt->lock);
  return ok_status();
}

// What one round trip may take while a node starts (the migration, preparing its statements):
// nothing is served yet, so a database slow for a moment (a busy machine, another node's
// migration, a lock on a table) delays the start instead of failing it.
constexpr Millis kStartRoundTripMs = 60'000;

Status PgBackend::start() {
  if (auto st = claim_data_dir(); !st.ok()) return st;
  pg::Primary::Options where;
  where.url = options_.url;
  where.deadline_ms = options_.statement_deadline_ms;
  where.on_change = [this] { primary_changed(); };
  auto primary = pg::Primary::open(std::move(where));
  if (!primary.ok()) return std::move(primary).error();
  primary_ = std::move(*primary);
  {
    auto conn = primary_->connect();
    if (!conn.ok()) return std::move(conn).error();
    // Nodes that start together queue on the migration's advisory lock: give it time.
    (*conn)->set_default_timeout(std::max(kStartRoundTripMs, options_.statement_deadline_ms));
    if (auto st = pg::migrate(**conn); !st.ok()) return st;
  }
  // The server's own limit (hold_rows.h, "Tokens"), and, from PostgreSQL 14, a check that
  // ends a statement whose node went away (this side closes a connection at its deadline).
  // Plans: every statement a node runs finds its rows by key or handle, through an index. A
  // prepared statement's plan is made once, often while the tables are still nearly empty, when
  // reading a whole table looks cheaper than an index: with sequential scans off, the plan
  // stays right as the tables grow (and JIT stays off: a disabled scan's cost would reach its
  // threshold, and compiling a query costs far more than running one of these). Generic plans: a
  // set statement's (pg_batch.h) would otherwise be planned again at each run, which costs more
  // than running it.
  const std::string setup =
      "SET statement_timeout = " + std::to_string(pg::kStatementTimeoutMs) +
      "; SET enable_seqscan = off; SET jit = off; SET plan_cache_mode = force_generic_plan"
      "; SELECT set_config('client_connection_check_interval', '1000', false) "
      "WHERE current_setting('server_version_num')::int >= 140000";
  std::vector<pg::Statement> statements = pg::HoldRows::statements();
  for (auto& s : pg::ClusterRows::statements()) statements.push_back(std::move(s));
  statements.push_back(pg::replication_statement());
  for (auto& s : pg::ValueRows::statements()) statements.push_back(std::move(s));
  for (auto& s : pg::PgEvents::statements()) statements.push_back(std::move(s));
  auto pool = pg::PgPool::open(*primary_, options_.pool_size, setup, std::move(statements),
                               kStartRoundTripMs);
  if (!pool.ok()) return std::move(pool).error();
  pool_ = std::move(*pool);
  holds_ = std::make_unique<pg::HoldRows>(*pool_);
  holds_->batch_commits(options_.commit_lanes);
  holds_->set_spawn([this](std::function<void()> job) { executor_.submit(std::move(job)); });
  cluster_ = std::make_unique<pg::ClusterRows>(*pool_);
  holds_->on_freed([this](const std::vector<std::string>& keys) { keys_freed(keys); });
  // Heartbeats have a connection of their own (pg_heartbeat.h).
  auto beat_pool =
      pg::PgPool::open(*primary_, 1, setup, pg::ClusterRows::statements(), kStartRoundTripMs);
  if (!beat_pool.ok()) return std::move(beat_pool).error();
  heartbeat_pool_ = std::move(*beat_pool);
  heartbeat_rows_ = std::make_unique<pg::ClusterRows>(*heartbeat_pool_);

  if (auto st = check_replication(); !st.ok()) return st;
  {
    std::lock_guard lock(replication_mu_);
    if (options_.require_sync_replication && !replication_.synchronous)
      return Error(ErrorCode::kUnavailable,
                   "requireSyncReplication is on and the database does not replicate "
                   "synchronously: " +
                       replication_.warning);
  }
  pool_->set_write_gate([this] { return replication_refusal(); });
  values_ = std::make_unique<pg::ValueRows>(*pool_);

  // The previous node of this data dir is dead (we hold its lock): its session holds go now,
  // not after the grace: no session hold survives a restart (docs/reference.md 2.11).
  const fs::path id_file = fs::path(options_.data_dir) / "node-id";
  std::int64_t previous = 0;
  if (std::ifstream in(id_file); in) in >> previous;
  if (previous > 0) {
    auto freed = holds_->free_node_sessions(previous);
    if (!freed.ok()) return std::move(freed).error();
    if (auto st = cluster_->forget_node(previous); !st.ok()) return st;
    if (auto st = holds_->forget_waits(previous); !st.ok()) return st;
    if (!freed->empty())
      spdlog::info("freed {} session holds of this data dir's previous node", freed->size());
  }
  auto id = cluster_->register_node(options_.node_name);
  if (!id.ok()) return std::move(id).error();
  node_id_ = *id;
  {
    std::ofstream out(id_file, std::ios::trunc);
    out << node_id_ << "\n";
    if (!out) return Error(ErrorCode::kUnavailable, "cannot write " + id_file.string());
  }
  if (auto st = reload_rules(); !st.ok()) return st;

  events_ = std::make_unique<pg::PgEvents>(
      *pool_, node_id_,
      pg::PgEvents::Hooks{[this](std::function<void()> task) { on_loop(std::move(task)); },
                          [this](std::function<void()> job) {
                            if (housekeeper_) housekeeper_->defer(std::move(job));
                          }});
  if (auto st = events_->start(); !st.ok()) return st;

  listener_ = std::make_unique<pg::Listener>(
      *primary_,
      std::vector<std::string>{pg::kKeysChannel, pg::kRulesChannel, events_->channel(),
                               events_->pubsub_channel()},
      [this](const std::string& channel, const std::string& payload, int pid) {
        on_notify(channel, payload, pid);
      },
      [this] {
        waiters_.poke_all();
        (void)reload_rules();
        events_->resynced();  // events sent while the connection was away are lost
      });
  if (auto st = listener_->start(); !st.ok()) return st;

  // The liveness rule's timing (schema_liveness.cc): a heartbeat at least every fifth of the
  // grace, and a gap of half the grace in a node's own heartbeats begins its contact again.
  const Millis every =
      std::max<Millis>(10, std::min(options_.heartbeat_ms, options_.session_grace_ms / 5));
  const Millis gap = options_.session_grace_ms / 2;
  heartbeat_ =
      std::make_unique<pg::Heartbeat>(*heartbeat_rows_, node_id_, options_.node_name, every, gap);
  if (auto st = heartbeat_->beat(); !st.ok()) return st;
  heartbeat_->start();

  HousekeeperOptions hk;
  hk.node_id = node_id_;
  hk.session_grace_ms = options_.session_grace_ms;
  hk.gap_ms = gap;
  hk.tick_ms = every;
  hk.sweep_ms = options_.sweep_ms;
  HousekeeperHooks hooks;
  hooks.keys_freed = [this](const std::vector<std::string>& keys) { keys_freed(keys); };
  hooks.rules_version = [this](std::int64_t v) { rules_version_seen(v); };
  hooks.every_sweep = [this] { (void)check_replication(); };
  hooks.held_count = [this](std::int64_t n) {
    held_ = n;
    // Typed values ride on the same tick (housekeeper thread): expired rows go, the rest count.
    (void)values_->sweep_expired();
    if (auto v = values_->count_live(); v.ok()) values_count_ = *v;
  };
  housekeeper_ = std::make_unique<PgHousekeeper>(*holds_, *cluster_, hk, std::move(hooks));
  housekeeper_->tick(/*sweep=*/true);
  housekeeper_->start();
  // The last waiter of a key on this node is gone: stop asking other nodes to notify it.
  waiters_.on_queue_closed([this](const std::string& key, std::uint64_t generation) {
    housekeeper_->defer([this, key, generation] {
      if (auto st = holds_->unregister_wait(key, node_id_, generation); !st.ok())
        spdlog::warn("unregistering waits for {}: {}", key, st.error().message);
    });
  });
  serving_ = true;
  spdlog::info(
      "node {} over PostgreSQL {} (schema version {}, {} connections, session grace {} ms, "
      "statement deadline {} ms)",
      node_id_, pg::redact_url(options_.url), pg::latest_schema_version(), options_.pool_size,
      options_.session_grace_ms, options_.statement_deadline_ms);
  return ok_status();
}

void PgBackend::primary_changed() {
  // Called on a watcher thread. Waiters ask again at once (their next statement goes to the
  // new primary), and the new primary's replication is read without waiting for a sweep.
  if (!serving_) return;
  waiters_.poke_all();
  listener_->poke();  // notifications now come from the new primary only
  housekeeper_->defer([this] { (void)check_replication(); });
}

Status PgBackend::check_replication() {
  auto read = pg::read_replication(*pool_);
  if (!read.ok()) return std::move(read).error();
  std::lock_guard lock(replication_mu_);
  const bool first = !replication_checked_;
  const bool was = replication_.synchronous;
  const std::string had = replication_.warning;
  replication_ = std::move(*read);
  replication_checked_ = true;
  if (!replication_.synchronous && (first || was || had != replication_.warning)) {
    spdlog::warn("the database does not replicate synchronously: {}{}", replication_.warning,
                 options_.require_sync_replication
                     ? "; requireSyncReplication is on: refusing changes"
                     : "; set [store] requireSyncReplication = true to refuse changes instead");
  } else if (replication_.synchronous && (first || !was || had != replication_.warning)) {
    spdlog::info(
        "the database replicates synchronously (synchronous_standby_names '{}', "
        "synchronous_commit {}){}",
        replication_.standby_names, replication_.synchronous_commit,
        replication_.warning.empty() ? "" : "; " + replication_.warning);
  }
  return ok_status();
}

std::optional<Error> PgBackend::replication_refusal() const {
  if (!options_.require_sync_replication) return std::nullopt;
  std::lock_guard lock(replication_mu_);
  if (!replication_checked_ || replication_.synchronous) return std::nullopt;
  return Error(ErrorCode::kStoreUnavailable,
               "refusing changes: the database does not replicate synchronously and "
               "requireSyncReplication is on: " +
                   replication_.warning);
}

void PgBackend::stop() {
  if (stopped_.exchange(true)) return;
  serving_ = false;
  // No change of primary reaches the threads stopped below any more.
  if (primary_) primary_->stop_watching();
  waiters_.close_all();
  if (housekeeper_) housekeeper_->stop();
  // Before the row goes: a heartbeat after it would write it again.
  if (heartbeat_) heartbeat_->stop();
  if (listener_) listener_->stop();
  if (events_) events_->stop();
  if (holds_ && node_id_ != 0) {
    // A clean exit frees this node's session holds at once (its connections are gone).
    if (auto freed = holds_->free_node_sessions(node_id_); !freed.ok())
      spdlog::warn("freeing this node's session holds: {}", freed.error().message);
    (void)cluster_->forget_node(node_id_);
    (void)holds_->forget_waits(node_id_);
  }
  if (holds_ && holds_->batches() > 0)
    spdlog::info("group commit: {} statements in {} batches, {} of them in {} set statements",
                 holds_->batched_statements(), holds_->batches(), holds_->set_calls(),
                 holds_->set_statements());
}

Error PgBackend::store_error(Error e) const {
  if (e.code == ErrorCode::kWrongType) return e;  // the keyspace's answer, not a failure
  spdlog::warn("{}", e.message);
  if (e.code == ErrorCode::kUnavailable) e.message = "the lock store is unavailable: " + e.message;
  if (pg::is_unknown_outcome(e))
    e.message =
        "the outcome of this change is unknown (this node settles it with the database "
        "before it answers anything else): " +
        e.message;
  return e;
}

bool PgBackend::contested(const std::string& key, bool read) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(contested_mu_);
    auto it = contested_.find(key);
    if (it != contested_.end() && (!read || now - it->second.second < kContestedTtl))
      return it->second.first;
    if (!read) return false;
  }
  // A failed read hands nothing over: the release frees the key as it always did.
  auto others = holds_->others_wait(key, node_id_);
  const bool yes = !others.ok() || *others;
  std::lock_guard lock(contested_mu_);
  if (contested_.size() > 4096) contested_.clear();  // hot keys are few; forget the cold
  contested_[key] = {yes, now};
  return yes;
}

void PgBackend::keys_freed(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) waiters_.poke(key);
}

void PgBackend::on_notify(const std::string& channel, const std::string& payload, int sender_pid) {
  // Every node, this one included, tells its readers the cluster's events from here.
  if (channel == events_->channel()) {
    events_->notified(payload);
    return;
  }
  if (channel == events_->pubsub_channel()) {
    relayed(payload);
    return;
  }
  // This node pokes its own waiters when its statements free a key or change the rules.
  if (pool_->is_own_backend(sender_pid)) return;
  if (channel == pg::kKeysChannel) {
    waiters_.poke(payload);
  } else if (channel == pg::kRulesChannel) {
    (void)reload_rules();
  }
}

void PgBackend::rules_version_seen(std::int64_t version) {
  {
    std::lock_guard reload(reload_mu_);
    if (version == rules_version_) return;
  }
  (void)reload_rules();
}

Status PgBackend::reload_rules() {
  std::lock_guard reload(reload_mu_);
  auto stored = cluster_->rule_set();
  if (!stored.ok()) return store_error(std::move(stored).error());
  const std::int64_t version = *stored ? (*stored)->version : 0;
  if (version == rules_version_) return ok_status();
  rules_version_ = version;
  std::optional<RuleSetPut> set;
  if (*stored) set = RuleSetPut{(*stored)->name, (*stored)->toml};
  on_loop([this, set = std::move(set)] {
    if (rules_changed_) rules_changed_(set);
  });
  return ok_status();
}

Issued PgBackend::put_rule_set(const RuleSetPut& rules, Completion& done) {
  return run(done, [this, rules]() -> Result<Answer> {
    std::lock_guard reload(reload_mu_);
    auto put = cluster_->put_rule_set(rules.name, rules.toml);
    if (!put.ok()) return store_error(std::move(put).error());
    ++counters_.writes;
    if (!put->stored)
      return Error(ErrorCode::kRulesetConflict,
                   "a lock rule set is already installed; delete it first")
          .with("installed", put->installed_name);
    rules_version_ = put->version;
    // Tasks run in order on the loop: the policy has the new set before this call finishes.
    on_loop([this, rules] {
      if (rules_changed_) rules_changed_(rules);
    });
    return Answer(RuleSetStored{rules.name, put->replaced});
  });
}

Issued PgBackend::get_rule_set(Completion& done) {
  return run(done, [this]() -> Result<Answer> {
    auto stored = cluster_->rule_set();
    if (!stored.ok()) return store_error(std::move(stored).error());
    std::optional<RuleSetPut> out;
    if (*stored) out = RuleSetPut{(*stored)->name, (*stored)->toml};
    return Answer(std::move(out));
  });
}

Issued PgBackend::delete_rule_set(std::string_view name, Completion& done) {
  return run(done, [this, name = std::string(name)]() -> Result<Answer> {
    std::lock_guard reload(reload_mu_);
    auto deleted = cluster_->delete_rule_set(name);
    if (!deleted.ok()) return store_error(std::move(deleted).error());
    if (!*deleted)
      return Error(ErrorCode::kNotFound, "no rule set named " + name + " is installed");
    ++counters_.writes;
    rules_version_ = 0;
    on_loop([this] {
      if (rules_changed_) rules_changed_(std::nullopt);
    });
    return Answer();
  });
}

Issued PgBackend::renew(const Caller&, const RenewArgs& args, Completion& done) {
  return run(done,
             [this, key = std::string(args.key), handle = std::string(args.handle),
              ttl = args.ttl_ms]() -> Result<Answer> {
               auto parsed = Handle::parse(handle);
               if (!parsed) return Answer(RenewOutcome{});
               // Any mode, and every key of a group with this handle (pg_groups.cc).
               auto ends = holds_->renew_handle(key, parsed->to_string(), ttl);
               if (!ends.ok()) return store_error(std::move(ends).error());
               if (!*ends) return Answer(RenewOutcome{});
               ++counters_.renewals;
               ++counters_.writes;
               return Answer(RenewOutcome{true, **ends});
             });
}

Issued PgBackend::release(const Caller&, const ReleaseArgs& args, Completion& done) {
  auto parsed = Handle::parse(args.handle);
  if (parsed && !inline_ && holds_->batching() && !waiters_.head_attempts_batched(args.key)) {
    // No hand-over to make: nothing in the release blocks but its statement, which goes to the
    // commit batches with no thread waiting for it (HoldRows::release_handle_async).
    holds_->release_handle_async(
        args.key, parsed->to_string(),
        [this, key = std::string(args.key), &done](Result<std::vector<std::string>> released) {
          auto answer = std::make_shared<Result<Answer>>(
              this->released(key, std::move(released), /*handed_over=*/false));
          on_loop([&done, answer] { done.finish(std::move(*answer)); });
        });
    return Issued::kWaiting;
  }
  return run(
      done,
      [this, key = std::string(args.key), handle = std::string(args.handle)]() -> Result<Answer> {
        auto parsed = Handle::parse(handle);
        if (!parsed) return Answer(ReleaseOutcome{false});
        // Any mode, and every key of a group with this handle (pg_groups.cc). With callers of
        // this node, and of no other, waiting for the key, and the first of them an exclusive
        // acquire (whose attempts are batched), it is woken as soon as the release is queued,
        // so its grant attempt can commit with the release (pg_batch.h, "Hand-over"); then it
        // needs no second wake-up for that key. When other nodes wait
        // too, the key frees first and every node's first waiter competes for it, as always:
        // a node that kept handing the key to its own waiters would starve theirs.
        std::function<void()> hand_over;
        if (waiters_.head_attempts_batched(key) && !contested(key, true))
          hand_over = [this, &key] { waiters_.poke(key); };
        bool handed_over = false;
        auto freed = holds_->release_handle(key, parsed->to_string(), hand_over, &handed_over);
        return released(key, std::move(freed), handed_over);
      });
}

Result<Answer> PgBackend::released(const std::string& key,
                                   Result<std::vector<std::string>> released, bool handed_over) {
  if (!released.ok()) return store_error(std::move(released).error());
  if (released->empty()) return Answer(ReleaseOutcome{false});
  if (handed_over) std::erase(*released, key);
  keys_freed(*released);
  if (handed_over) {
    // Multi-key waiters of the key heard the early wake-up too, and may have looked
    // before the release committed: they look again.
    waiters_.poke_watchers(key);
    released->push_back(key);
  }
  ++counters_.writes;
  counters_.releases += released->size();
  held_ -= static_cast<std::int64_t>(released->size());
  return Answer(ReleaseOutcome{true});
}

Result<StatusView> PgBackend::status_of(const std::string& key) {
  Millis db_now = 0;
  auto found = holds_->find(key, &db_now);
  if (!found.ok()) return store_error(std::move(found).error());
  StatusView s;
  s.key = key;
  s.as_of = db_now;                 // PTTL counts from the database's clock, as the lease does
  s.waiters = waiters_.count(key);  // this node's queue: waiters elsewhere are not counted
  if (*found && (*found)->mode != LockMode::kExclusive) return group_status(std::move(s), **found);
  if (*found) {
    s.held = true;
    s.hold = std::move(**found);
  } else {
    auto closed = holds_->closed_until(key);  // docs/lock-kinds.md, "Lock-delay"
    if (!closed.ok()) return store_error(std::move(closed).error());
    s.lock_delay_until = *closed;
  }
  return s;
}

Issued PgBackend::status(const Caller&, std::string_view key, Completion& done) {
  return run(done, [this, key = std::string(key)]() -> Result<Answer> {
    auto s = status_of(key);
    if (!s.ok()) return std::move(s).error();
    if (!s->held) {
      if (auto err = wrong_type_if_value(key)) return std::move(*err);
    }
    return Answer(std::move(*s));
  });
}

Issued PgBackend::get_value(std::string_view key, Completion& done) {
  return run(done, [this, key = std::string(key)]() -> Result<Answer> {
    auto s = status_of(key);
    if (!s.ok()) return std::move(s).error();
    StoredValue v;
    if (s->held) {
      v.value = std::move(s->hold.owner);
      return Answer(std::move(v));
    }
    // A counter answers its number, as Redis answers GET of a string INCR made.
    auto row = values_->open(key, tx_open_);
    if (!row.ok()) return store_error(std::move(row).error());
    if (row->value.value) {
      const auto* counter = std::get_if<std::int64_t>(&row->value.value->data);
      if (counter == nullptr) return wrong_type();
      v.value = std::to_string(*counter);
    }
    return Answer(std::move(v));
  });
}

Issued PgBackend::list(const Caller&, std::string_view match, std::string_view after,
                       std::size_t count, Completion& done) {
  return run(done, [this, match = std::string(match), after = std::string(after), count] {
    return do_list(match, after, count);
  });
}

// Scans in key order from the cursor (and from the glob's literal prefix), filtering with the
// glob, until one match more than the page holds shows whether another page follows.
Result<Answer> PgBackend::do_list(std::string_view match, std::string after, std::size_t count) {
  const std::string prefix = glob_literal_prefix(match);
  const std::int64_t batch = static_cast<std::int64_t>(std::min<std::size_t>(count + 1, 1000));
  std::vector<HoldState> found;
  for (bool exhausted = false; !exhausted && found.size() <= count;) {
    auto rows = holds_->scan(after, prefix, batch);
    if (!rows.ok()) return store_error(std::move(rows).error());
    exhausted = static_cast<std::int64_t>(rows->size()) < batch;
    for (HoldState& h : *rows) {
      after = h.key;
      if (!h.key.starts_with(prefix)) {  // past every key the glob can match
        exhausted = true;
        break;
      }
      if (!match.empty() && !glob_match(match, h.key)) continue;
      found.push_back(std::move(h));
      if (found.size() > count) break;
    }
  }
  ListPage page;
  if (found.size() > count) {
    found.resize(count);
    page.next_cursor = encode_list_cursor(found.back().key);
  } else {
    page.next_cursor = "0";
  }
  for (HoldState& h : found) {
    if (h.mode == LockMode::kExclusive) {
      page.holds.push_back(std::move(h));
      continue;
    }
    auto members = group_members(h);  // a page keeps a key's holds together
    if (!members.ok()) return std::move(members).error();
    for (HoldState& m : *members) page.holds.push_back(std::move(m));
  }
  return Answer(std::move(page));
}

Issued PgBackend::transfer(const Caller& caller, const TransferArgs& args, Completion& done) {
  return run(done, [this, held_by = caller.principal->held_by(), key = std::string(args.key),
                    to = std::string(args.to_id), from = std::string(*args.from_id)] {
    return do_transfer(held_by, TransferArgs{key, to, from});
  });
}

Result<Answer> PgBackend::do_transfer(std::string_view held_by, const TransferArgs& args) {
  auto moved = holds_->transfer(args.key, args.to_id, *args.from_id, held_by);
  if (!moved.ok()) return store_error(std::move(moved).error());
  if (*moved) {
    ++counters_.grants;
    ++counters_.writes;
    return Answer(std::move(**moved));
  }
  // Why not: read the hold as it is now (it may have moved on since; the code is the same).
  auto now = holds_->find(args.key);
  if (!now.ok()) return store_error(std::move(now).error());
  if (!*now) return not_holder(args.key, "the key is not assigned to fromId (it is free)");
  if ((*now)->mode != LockMode::kExclusive)
    return not_holder(args.key, "the key is held in shared or semaphore mode, not assigned");
  if ((*now)->kind != HoldKind::kAssigned)
    return not_holder(args.key, "the key is held by a handle hold, not assigned");
  return not_holder(args.key, "the key is not assigned to fromId");
}

Issued PgBackend::unassign(const Caller&, const UnassignArgs& args, Completion& done) {
  std::optional<std::string> holder;
  if (args.holder_id) holder = std::string(*args.holder_id);
  return run(done, [this, key = std::string(args.key), holder = std::move(holder)] {
    UnassignArgs a;
    a.key = key;
    if (holder) a.holder_id = *holder;
    return do_unassign(a);
  });
}

Result<Answer> PgBackend::do_unassign(const UnassignArgs& args) {
  auto freed = holds_->unassign(args.key, args.holder_id);
  if (!freed.ok()) return store_error(std::move(freed).error());
  if (*freed) {
    waiters_.poke(args.key);
    ++counters_.releases;
    ++counters_.writes;
    --held_;
    return Answer(ReleaseOutcome{true});
  }
  auto now = holds_->find(args.key);
  if (!now.ok()) return store_error(std::move(now).error());
  if (!*now) return Answer(ReleaseOutcome{false});
  if ((*now)->mode != LockMode::kExclusive)
    return not_holder(args.key, "the key is held in shared or semaphore mode, not assigned");
  if ((*now)->kind != HoldKind::kAssigned)
    return not_holder(args.key, "the key is held by a handle hold; release it with its handle");
  if (args.holder_id && (*now)->holder_id != *args.holder_id)
    return not_holder(args.key, "the key is assigned to another holder");
  return Answer(ReleaseOutcome{false});  // freed by someone else between the two statements
}

Result<HolderView> PgBackend::find_holder(const std::string& key) {
  auto found = holds_->find(key);
  if (!found.ok()) return store_error(std::move(found).error());
  HolderView v;
  v.key = key;
  if (!*found) {
    if (auto err = wrong_type_if_value(key)) return std::move(*err);
    return v;
  }
  if ((*found)->mode != LockMode::kExclusive) {
    // A shared or semaphore key: its newest hold speaks for it.
    auto members = group_members(**found);
    if (!members.ok()) return std::move(members).error();
    if (members->empty()) return v;
    v.held = true;
    v.token = members->back().token;
    v.acquired_at = members->back().acquired_at;
    v.lease_expires_at = members->back().lease_expires_at;
    return v;
  }
  v.held = true;
  if ((*found)->kind == HoldKind::kAssigned) v.holder = (*found)->holder_id;
  v.token = (*found)->token;
  v.acquired_at = (*found)->acquired_at;
  v.lease_expires_at = (*found)->lease_expires_at;
  return v;
}

Issued PgBackend::holder(const Caller&, std::string_view key, Completion& done) {
  return run(done, [this, key = std::string(key)]() -> Result<Answer> {
    auto view = find_holder(key);
    if (!view.ok()) return std::move(view).error();
    return Answer(std::move(*view));
  });
}

Issued PgBackend::check(const Caller&, const CheckArgs& args, Completion& done) {
  return run(done,
             [this, key = std::string(args.key),
              holder_id = std::string(*args.holder_id)]() -> Result<Answer> {
               auto view = find_holder(key);
               if (!view.ok()) return std::move(view).error();
               auto checked = check_holder(std::move(*view), holder_id);
               if (!checked.ok()) return std::move(checked).error();
               return Answer(std::move(*checked));
             });
}

void PgBackend::end_session(SessionId session) {
  if (!waiters_.close_session(session) || stopped_) return;
  executor_.submit([this, session] {
    auto freed = holds_->end_session(node_id_, session);
    if (!freed.ok()) {
      // The holds stay until their lease ends or, if the database is back later, until this
      // node stops; log it so an operator can see why a key stayed held.
      spdlog::warn("freeing the session holds of connection {}: {}", session,
                   freed.error().message);
      return;
    }
    counters_.releases += freed->size();
    ++counters_.writes;
    held_ -= static_cast<std::int64_t>(freed->size());
    keys_freed(*freed);
  });
}

ServiceStats PgBackend::stats() const {
  ServiceStats s;
  s.held = static_cast<std::size_t>(std::max<std::int64_t>(held_.load(), 0));
  s.values = static_cast<std::size_t>(std::max<std::int64_t>(values_count_.load(), 0));
  s.waiters = waiters_.total();
  s.counters.grants = counters_.grants;
  s.counters.releases = counters_.releases;
  s.counters.expiries = counters_.expiries;
  s.counters.timeouts = counters_.timeouts;
  s.counters.renewals = counters_.renewals;
  s.store.appended = counters_.writes;
  // Read apart from `grants`, the split can be ahead of it by a grant in flight.
  const std::uint64_t shared = counters_.shared_grants, semaphore = counters_.semaphore_grants;
  const std::uint64_t all = s.counters.grants;
  s.grants_by_mode = std::array<std::uint64_t, 3>{
      all > shared + semaphore ? all - shared - semaphore : 0, shared, semaphore};
  if (!primary_) return s;
  StoreReplication r;
  {
    std::lock_guard lock(replication_mu_);
    if (replication_checked_) {
      r.state = replication_.synchronous ? "synchronous" : "asynchronous";
      r.warning = replication_.warning;
      r.sync_standbys = replication_.sync_standbys;
    }
  }
  r.required = options_.require_sync_replication;
  const pg::Primary::View where = primary_->view();
  r.primary = where.host;
  r.timeline = where.timeline;
  r.primary_changes = where.changes;
  r.unsettled_writes = holds_ ? holds_->doubts() : 0;
  // While unsafe and required, changes are refused: the store is at fault (/readyz answers 503).
  if (auto refused = replication_refusal()) {
    s.store.fault = std::move(*refused);
    s.store.faults = 1;
  }
  s.replication = std::move(r);
  return s;
}

}  // namespace holdfast
