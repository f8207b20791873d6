#include "server/pg_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/glob.h"
#include "core/validation.h"
#include "server/pg_list.h"
#include "store/postgres/schema.h"
#include "store/wal/data_dir.h"
#include "store/wal/format.h"

namespace holdfast {

namespace fs = std::filesystem;

PgService::PgService(PgServiceOptions options) : options_(std::move(options)) {}

PgService::~PgService() { stop(); }

// One server per data dir, whatever its store: the same LOCK file as the write-ahead log's.
// Holding it also proves that the node recorded in node-id (this dir's last node) is dead.
Status PgService::claim_data_dir() {
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

Status PgService::start() {
  if (auto st = claim_data_dir(); !st.ok()) return st;
  {
    auto conn = pg::PgConn::connect(options_.url);
    if (!conn.ok()) return std::move(conn).error();
    if (auto st = pg::migrate(**conn); !st.ok()) return st;
  }
  std::vector<pg::Statement> statements = pg::HoldRows::statements();
  for (auto& s : pg::ClusterRows::statements()) statements.push_back(std::move(s));
  auto pool = pg::PgPool::open(options_.url, options_.pool_size,
                               "SET statement_timeout = " + std::to_string(pg::kStatementTimeoutMs),
                               std::move(statements));
  if (!pool.ok()) return std::move(pool).error();
  pool_ = std::move(*pool);
  holds_ = std::make_unique<pg::HoldRows>(*pool_);
  cluster_ = std::make_unique<pg::ClusterRows>(*pool_);

  // The previous node of this data dir is dead (we hold its lock): its session holds go now,
  // not after the grace. SPEC: no session hold survives a restart.
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

  listener_ = std::make_unique<pg::Listener>(
      options_.url, std::vector<std::string>{pg::kKeysChannel, pg::kRulesChannel},
      [this](const std::string& channel, const std::string& payload, int pid) {
        on_notify(channel, payload, pid);
      },
      [this] {
        waiters_.poke_all();
        (void)reload_rules();
      });
  if (auto st = listener_->start(); !st.ok()) return st;

  HousekeeperOptions hk;
  hk.node_id = node_id_;
  hk.node_name = options_.node_name;
  hk.session_grace_ms = options_.session_grace_ms;
  hk.heartbeat_ms =
      std::max<Millis>(10, std::min(options_.heartbeat_ms, options_.session_grace_ms / 3));
  hk.sweep_ms = options_.sweep_ms;
  HousekeeperHooks hooks;
  hooks.keys_freed = [this](const std::vector<std::string>& keys) { keys_freed(keys); };
  hooks.rules_version = [this](std::int64_t v) { rules_version_seen(v); };
  hooks.held_count = [this](std::int64_t n) { held_ = n; };
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
  spdlog::info(
      "node {} over PostgreSQL {} (schema version {}, {} connections, session grace {} ms)",
      node_id_, pg::redact_url(options_.url), pg::latest_schema_version(), options_.pool_size,
      options_.session_grace_ms);
  return ok_status();
}

void PgService::stop() {
  if (stopped_.exchange(true)) return;
  waiters_.close_all();
  if (housekeeper_) housekeeper_->stop();
  if (listener_) listener_->stop();
  if (holds_ && node_id_ != 0) {
    // A clean exit frees this node's session holds at once (its connections are gone).
    if (auto freed = holds_->free_node_sessions(node_id_); !freed.ok())
      spdlog::warn("freeing this node's session holds: {}", freed.error().message);
    (void)cluster_->forget_node(node_id_);
    (void)holds_->forget_waits(node_id_);
  }
}

Error PgService::store_error(Error e) const {
  spdlog::warn("{}", e.message);
  if (e.code == ErrorCode::kUnavailable) e.message = "the lock store is unavailable: " + e.message;
  return e;
}

void PgService::keys_freed(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) waiters_.poke(key);
}

void PgService::on_notify(const std::string& channel, const std::string& payload, int sender_pid) {
  // This node pokes its own waiters when its statements free a key or change the rules.
  if (pool_->is_own_backend(sender_pid)) return;
  if (channel == pg::kKeysChannel) {
    waiters_.poke(payload);
  } else if (channel == pg::kRulesChannel) {
    (void)reload_rules();
  }
}

std::optional<Error> PgService::gate(const Caller& caller, LockOperation op,
                                     std::string_view key) const {
  std::shared_ptr<const RuleSet> rules;
  {
    std::lock_guard lock(rules_mu_);
    rules = rules_;
  }
  return check_access(rules.get(), *caller.principal, op, key);
}

void PgService::rules_version_seen(std::int64_t version) {
  {
    std::lock_guard lock(rules_mu_);
    if (version == rules_version_) return;
  }
  (void)reload_rules();
}

Status PgService::reload_rules() {
  std::lock_guard reload(reload_mu_);
  auto stored = cluster_->rule_set();
  if (!stored.ok()) return store_error(std::move(stored).error());
  std::shared_ptr<const RuleSet> compiled;
  std::int64_t version = 0;
  if (*stored) {
    version = (*stored)->version;
    {
      std::lock_guard lock(rules_mu_);
      if (version == rules_version_) return ok_status();
    }
    auto parsed = parse_rule_set((*stored)->toml);
    if (!parsed.ok()) {
      // Refuse to start on it; at run time keep enforcing the previous set.
      spdlog::error("the stored rule set no longer compiles: {}", parsed.error().message);
      return Error(ErrorCode::kInternal,
                   "the stored rule set no longer compiles: " + parsed.error().message);
    }
    compiled = std::make_shared<const RuleSet>(std::move(*parsed));
  }
  std::lock_guard lock(rules_mu_);
  rules_ = std::move(compiled);
  rules_version_ = version;
  return ok_status();
}

Result<bool> PgService::set_rule_set(const Caller& caller, std::string_view toml) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "changing the rule set needs the admin or owner role");
  auto parsed = parse_rule_set(toml);
  if (!parsed.ok()) return std::move(parsed).error();
  std::lock_guard reload(reload_mu_);
  auto put = cluster_->put_rule_set(parsed->name, parsed->toml);
  if (!put.ok()) return store_error(std::move(put).error());
  ++counters_.writes;
  if (!put->stored)
    return Error(ErrorCode::kRulesetConflict,
                 "a lock rule set is already installed; delete it first")
        .with("installed", put->installed_name);
  std::lock_guard lock(rules_mu_);
  rules_ = std::make_shared<const RuleSet>(std::move(*parsed));
  rules_version_ = put->version;
  return put->replaced;
}

Result<std::optional<RuleSetPut>> PgService::get_rule_set(const Caller& caller) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "reading the rule set needs the admin or owner role");
  auto stored = cluster_->rule_set();
  if (!stored.ok()) return store_error(std::move(stored).error());
  std::optional<RuleSetPut> out;
  if (*stored) out = RuleSetPut{(*stored)->name, (*stored)->toml};
  return out;
}

Status PgService::delete_rule_set(const Caller& caller, std::string_view name) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "changing the rule set needs the admin or owner role");
  std::lock_guard reload(reload_mu_);
  auto deleted = cluster_->delete_rule_set(name);
  if (!deleted.ok()) return store_error(std::move(deleted).error());
  if (!*deleted)
    return Error(ErrorCode::kNotFound, "no rule set named " + std::string(name) + " is installed");
  ++counters_.writes;
  std::lock_guard lock(rules_mu_);
  rules_.reset();
  rules_version_ = 0;
  return ok_status();
}

namespace {

// A handle as presented by a caller (the embedded table's rule): empty or oversized input is
// an error; anything else that is not one of our handles simply does not match.
std::optional<Error> check_handle_text(std::string_view handle) {
  if (handle.empty()) return invalid_argument("handle must not be empty");
  if (handle.size() > 64) return invalid_argument("handle is longer than 64 characters");
  return std::nullopt;
}

Error not_holder_error(std::string_view key, std::string_view why) {
  return Error(ErrorCode::kLockNotHolder, std::string(why)).with("key", std::string(key));
}

}  // namespace

Result<RenewOutcome> PgService::renew(const Caller& caller, std::string_view key,
                                      std::string_view handle, Millis ttl_ms) {
  if (auto denied = gate(caller, LockOperation::kRenew, key)) return std::move(*denied);
  if (auto err = check_key(key)) return std::move(*err);
  if (auto err = check_handle_text(handle)) return std::move(*err);
  if (auto err = check_ttl(ttl_ms)) return std::move(*err);
  auto parsed = Handle::parse(handle);
  if (!parsed) return RenewOutcome{};
  auto ends = holds_->renew(key, parsed->to_string(), cap_ttl(ttl_ms));
  if (!ends.ok()) return store_error(std::move(ends).error());
  if (!*ends) return RenewOutcome{};
  ++counters_.renewals;
  ++counters_.writes;
  return RenewOutcome{true, **ends};
}

Result<ReleaseOutcome> PgService::release(const Caller&, std::string_view key,
                                          std::string_view handle) {
  if (auto err = check_key(key)) return std::move(*err);
  if (auto err = check_handle_text(handle)) return std::move(*err);
  auto parsed = Handle::parse(handle);
  if (!parsed) return ReleaseOutcome{false};
  auto released = holds_->release(key, parsed->to_string());
  if (!released.ok()) return store_error(std::move(released).error());
  if (!*released) return ReleaseOutcome{false};
  waiters_.poke(key);
  ++counters_.releases;
  ++counters_.writes;
  --held_;
  return ReleaseOutcome{true};
}

Result<StatusView> PgService::status(const Caller&, std::string_view key) {
  if (auto err = check_key(key)) return std::move(*err);
  auto found = holds_->find(key);
  if (!found.ok()) return store_error(std::move(found).error());
  StatusView s;
  s.key = std::string(key);
  s.waiters = waiters_.count(key);  // this node's queue: waiters elsewhere are not counted
  if (*found) {
    s.held = true;
    s.hold = std::move(**found);
  }
  return s;
}

Result<ListPage> PgService::list(const Caller& caller, std::string_view match,
                                 std::string_view cursor, std::size_t count) {
  if (!caller.principal->is_privileged())
    return Error(ErrorCode::kForbidden, "listing locks needs the admin or owner role");
  std::string after;
  if (!cursor.empty() && cursor != "0") {
    auto decoded = decode_list_cursor(cursor);
    if (!decoded) return invalid_argument("cursor is not one this server returned");
    after = std::move(*decoded);
  }
  if (count == 0) return invalid_argument("COUNT must be at least 1");
  // Scan in key order from the cursor (and from the glob's literal prefix), filtering with
  // the glob, until one match more than the page holds shows whether another page follows.
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
  page.holds = std::move(found);
  return page;
}

Result<HoldState> PgService::transfer(const Caller& caller, std::string_view key,
                                      std::string_view to_id, std::string_view from_id) {
  if (auto denied = gate(caller, LockOperation::kTransfer, key)) return std::move(*denied);
  if (auto err = check_key(key)) return std::move(*err);
  if (auto err = check_label(to_id, "toId")) return std::move(*err);
  if (auto err = check_label(from_id, "fromId")) return std::move(*err);
  auto moved = holds_->transfer(key, to_id, from_id, caller.principal->held_by());
  if (!moved.ok()) return store_error(std::move(moved).error());
  if (*moved) {
    ++counters_.grants;
    ++counters_.writes;
    return std::move(**moved);
  }
  // Why not: read the hold as it is now (it may have moved on since; the code is the same).
  auto now = holds_->find(key);
  if (!now.ok()) return store_error(std::move(now).error());
  if (!*now) return not_holder_error(key, "the key is not assigned to fromId (it is free)");
  if ((*now)->kind != HoldKind::kAssigned)
    return not_holder_error(key, "the key is held by a handle hold, not assigned");
  return not_holder_error(key, "the key is not assigned to fromId");
}

Result<ReleaseOutcome> PgService::unassign(const Caller& caller, std::string_view key,
                                           std::optional<std::string_view> holder_id) {
  if (auto denied = gate(caller, LockOperation::kUnassign, key)) return std::move(*denied);
  if (auto err = check_key(key)) return std::move(*err);
  if (holder_id) {
    if (auto err = check_label(*holder_id, "holderId")) return std::move(*err);
  }
  auto freed = holds_->unassign(key, holder_id);
  if (!freed.ok()) return store_error(std::move(freed).error());
  if (*freed) {
    waiters_.poke(key);
    ++counters_.releases;
    ++counters_.writes;
    --held_;
    return ReleaseOutcome{true};
  }
  auto now = holds_->find(key);
  if (!now.ok()) return store_error(std::move(now).error());
  if (!*now) return ReleaseOutcome{false};
  if ((*now)->kind != HoldKind::kAssigned)
    return not_holder_error(key, "the key is held by a handle hold; release it with its handle");
  if (holder_id && (*now)->holder_id != *holder_id)
    return not_holder_error(key, "the key is assigned to another holder");
  return ReleaseOutcome{false};  // freed by someone else between the two statements
}

Result<HolderView> PgService::holder(const Caller&, std::string_view key) {
  if (auto err = check_key(key)) return std::move(*err);
  auto found = holds_->find(key);
  if (!found.ok()) return store_error(std::move(found).error());
  HolderView v;
  v.key = std::string(key);
  if (!*found) return v;
  v.held = true;
  if ((*found)->kind == HoldKind::kAssigned) v.holder = (*found)->holder_id;
  v.acquired_at = (*found)->acquired_at;
  v.lease_expires_at = (*found)->lease_expires_at;
  return v;
}

void PgService::end_session(SessionId session) {
  if (!waiters_.close_session(session) || stopped_) return;
  auto freed = holds_->end_session(node_id_, session);
  if (!freed.ok()) {
    // The holds stay until their lease ends or, if the database is back later, until this
    // node stops; log it so an operator can see why a key stayed held.
    spdlog::warn("freeing the session holds of connection {}: {}", session, freed.error().message);
    return;
  }
  counters_.releases += freed->size();
  ++counters_.writes;
  held_ -= static_cast<std::int64_t>(freed->size());
  keys_freed(*freed);
}

ServiceStats PgService::stats() const {
  ServiceStats s;
  s.held = static_cast<std::size_t>(std::max<std::int64_t>(held_.load(), 0));
  s.waiters = waiters_.total();
  s.counters.grants = counters_.grants;
  s.counters.releases = counters_.releases;
  s.counters.expiries = counters_.expiries;
  s.counters.timeouts = counters_.timeouts;
  s.counters.renewals = counters_.renewals;
  s.store.appended = counters_.writes;
  return s;
}

}  // namespace holdfast
