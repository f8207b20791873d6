#include "service/postgres/pg_events.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "service/postgres/hold_rows.h"

namespace holdfast::pg {
namespace {

// A lease end is looked at this long after it, by this node's clock (the database's decides).
constexpr Millis kExpiryMargin = 5;

Millis wall_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// The reads are marked so (pg_pool.h): a failure of one changes nothing, and the write gate of
// requireSyncReplication does not refuse them.
std::vector<Statement> PgEvents::statements() {
  return {
      // $1 node, $2 watching
      {"hf_ev_watching", "SELECT holdfast_set_watching($1::bigint, $2::boolean)"},
      reading("hf_ev_anyone", "SELECT EXISTS (SELECT 1 FROM holdfast_watchers)"),
      reading("hf_ev_channels",
              "SELECT holdfast_channel('events', n.nspname), holdfast_channel('pubsub', "
              "n.nspname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
              "WHERE c.oid = 'holdfast_holds'::regclass"),
      // $1 channel, $2 payload
      {"hf_ev_notify", "SELECT pg_notify($1, $2)"},
      // $1 channel, $2 payloads, sent in their order (a function scan of the array)
      {"hf_ev_notify_all", "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p"},
      // $1 key, $2 token
      reading("hf_ev_lease",
              "SELECT now_ms, present, lease FROM holdfast_hold_lease($1, $2::bigint)"),
      // Every live hold: the single ones, then the shared and semaphore ones with their key's
      // mode and permits.
      reading("hf_ev_live", R"sql(WITH now AS MATERIALIZED (SELECT holdfast_now_ms() AS ms)
SELECT h.key, h.token, h.held_by, h.owner, h.holder_id, h.acquired_at, h.lease_expires_at,
       h.scope, h.kind, 0::smallint, NULL::integer, NULL::integer
  FROM holdfast_holds h, now
 WHERE h.held_by <> '' AND (h.lease_expires_at IS NULL OR h.lease_expires_at > now.ms)
UNION ALL
SELECT m.key, m.token, m.held_by, m.owner, NULL, m.acquired_at, m.lease_expires_at, m.scope,
       0::smallint, g.mode, g.permit_limit, m.permits
  FROM holdfast_members m JOIN holdfast_holds g ON g.key = m.key, now
 WHERE m.lease_expires_at > now.ms)sql"),
  };
}

Status PgEvents::start() {
  auto channels = pool_.run("hf_ev_channels", Params());
  if (!channels.ok()) return std::move(channels).error();
  if (channels->empty()) return Error(ErrorCode::kInternal, "no holdfast_holds table");
  channel_ = std::string(channels->text(0, 0));
  pubsub_channel_ = std::string(channels->text(0, 1));
  // This data dir's node of a previous life may have watched; the row goes, and with the last
  // row the triggers.
  auto anyone = pool_.run("hf_ev_watching", Params().number(node_id_).text("false"));
  if (!anyone.ok()) return std::move(anyone).error();
  set_cluster_watching(anyone->boolean(0, 0));
  return ok_status();
}

void PgEvents::restart_mirror() {
  ++generation_;
  known_.clear();
  lease_ends_.clear();
  checking_.clear();
  ended_.clear();
  seeded_ = false;
}

void PgEvents::set_sink(LockEventSink* sink) {
  const bool was = sink_ != nullptr;
  sink_ = sink;
  if ((sink != nullptr) == was) return;
  restart_mirror();
  const bool watching = sink != nullptr;
  const std::uint64_t generation = generation_;
  hooks_.on_db([this, watching, generation] { register_and_seed(watching, generation); });
}

void PgEvents::resynced() {
  hooks_.on_loop([this] {
    if (sink_ == nullptr) return;
    restart_mirror();
    const std::uint64_t generation = generation_;
    hooks_.on_db([this, generation] { register_and_seed(true, generation); });
    sink_->on_events_lost();
  });
}

void PgEvents::stop() {
  if (!registered_.exchange(false)) return;
  if (auto r = pool_.run("hf_ev_watching", Params().number(node_id_).text("false")); !r.ok())
    spdlog::warn("lock events: {}", r.error().message);
}

void PgEvents::register_and_seed(bool watching, std::uint64_t generation) {
  auto anyone =
      pool_.run("hf_ev_watching", Params().number(node_id_).text(watching ? "true" : "false"));
  if (!anyone.ok()) {
    spdlog::warn("lock events: {}", anyone.error().message);
    return;
  }
  registered_ = watching;
  set_cluster_watching(anyone->boolean(0, 0));
  if (!watching) return;
  // The triggers are on: every change that commits from now on is told.
  hooks_.on_loop([this, generation] {
    if (generation == generation_ && sink_ != nullptr) sink_->on_events_ready();
  });
  // The holds live now, for their lease ends: read after the triggers were on, so a hold
  // granted meanwhile is in this list, or told by its event, or both.
  auto rows = pool_.run("hf_ev_live", Params());
  if (!rows.ok()) {
    spdlog::warn("lock events: reading the live holds: {}", rows.error().message);
    return;
  }
  std::vector<LockEvent> holds;
  holds.reserve(static_cast<std::size_t>(rows->size()));
  for (int r = 0; r < rows->size(); ++r) {
    LockEvent h;
    h.kind = LockEventKind::kAcquired;
    h.key = std::string(rows->text(r, 0));
    h.token = static_cast<std::uint64_t>(rows->number(r, 1));
    h.held_by = std::string(rows->text(r, 2));
    h.owner = rows->maybe_text(r, 3).value_or("");
    h.holder_id = rows->maybe_text(r, 4).value_or("");
    h.acquired_at = rows->number(r, 5);
    h.lease_expires_at = rows->maybe_number(r, 6).value_or(kNever);
    h.scope = rows->number(r, 7) == 1 ? Scope::kSession : Scope::kLease;
    h.hold_kind = rows->number(r, 8) == 1 ? HoldKind::kAssigned : HoldKind::kHandle;
    h.mode = mode_of_number(rows->number(r, 9));
    if (h.mode == LockMode::kSemaphore) {
      h.permits = static_cast<std::uint32_t>(rows->maybe_number(r, 10).value_or(0));
      h.take = static_cast<std::uint32_t>(rows->maybe_number(r, 11).value_or(0));
    }
    holds.push_back(std::move(h));
  }
  hooks_.on_loop([this, holds = std::move(holds), generation]() mutable {
    seed(std::move(holds), generation);
  });
}

void PgEvents::seed(std::vector<LockEvent> holds, std::uint64_t generation) {
  if (generation != generation_ || sink_ == nullptr) return;
  for (LockEvent& h : holds) {
    if (ended_.contains({h.key, h.token})) continue;
    auto& tokens = known_[h.key];
    if (tokens.contains(h.token)) continue;
    remember(h);
  }
  ended_.clear();
  seeded_ = true;
}

void PgEvents::remember(const LockEvent& hold) {
  auto& known = known_[hold.key][hold.token];
  if (known.hold.lease_expires_at != kNever && known.hold.token != 0)
    lease_ends_.erase({known.hold.lease_expires_at, {hold.key, hold.token}});
  known.hold = hold;
  if (hold.lease_expires_at != kNever)
    lease_ends_.insert({hold.lease_expires_at, {hold.key, hold.token}});
}

void PgEvents::forget(const std::string& key, std::uint64_t token) {
  if (!seeded_) ended_.insert({key, token});
  auto it = known_.find(key);
  if (it == known_.end()) return;
  auto t = it->second.find(token);
  if (t == it->second.end()) return;
  if (t->second.hold.lease_expires_at != kNever)
    lease_ends_.erase({t->second.hold.lease_expires_at, {key, token}});
  it->second.erase(t);
  if (it->second.empty()) known_.erase(it);
}

void PgEvents::emit(const LockEvent& event) {
  if (sink_ != nullptr) sink_->on_lock_event(event);
}

void PgEvents::expire_if_known(const std::string& key, std::uint64_t token) {
  auto it = known_.find(key);
  if (it == known_.end()) return;
  auto t = it->second.find(token);
  if (t == it->second.end()) return;
  LockEvent e = t->second.hold;
  e.kind = LockEventKind::kExpired;
  e.at = e.lease_expires_at;
  forget(key, token);
  emit(e);
}

void PgEvents::notified(const std::string& payload) {
  auto parsed = parse_event_payload(payload);
  if (!parsed) {
    spdlog::warn("lock events: a payload that is no event: {}", payload.substr(0, 200));
    return;
  }
  if (const auto* w = std::get_if<WatchingPayload>(&*parsed)) {
    set_cluster_watching(w->watching);
    return;
  }
  hooks_.on_loop([this, change = std::move(std::get<ChangePayload>(*parsed))]() mutable {
    deliver(std::move(change));
  });
}

void PgEvents::deliver(ChangePayload change) {
  if (sink_ == nullptr) return;
  LockEvent& e = change.event;
  switch (e.kind) {
    case LockEventKind::kAcquired:
    case LockEventKind::kAssigned:
    case LockEventKind::kTransferred:
      if (change.replaced) {
        // The hold this grant replaced: still live, it was re-taken or moved (no event of its
        // own, as on a single server); ended, its lease ran out, which nobody told yet.
        if (change.replaced_live) {
          forget(e.key, *change.replaced);
        } else {
          expire_if_known(e.key, *change.replaced);
        }
      }
      remember(e);
      break;
    case LockEventKind::kRenewed:
      remember(e);
      break;
    case LockEventKind::kReleased:
    case LockEventKind::kUnassigned:
      forget(e.key, e.token);
      break;
    default:
      break;
  }
  emit(e);
}

std::optional<Millis> PgEvents::next_deadline() const {
  for (const auto& [at, hold] : lease_ends_)
    if (!checking_.contains(hold)) return at + kExpiryMargin;
  return std::nullopt;
}

void PgEvents::advance(Millis now) {
  if (sink_ == nullptr) return;
  std::vector<std::pair<std::string, std::uint64_t>> due;
  for (const auto& [at, hold] : lease_ends_) {
    if (at + kExpiryMargin > now) break;
    if (checking_.insert(hold).second) due.push_back(hold);
  }
  if (due.empty()) return;
  const std::uint64_t generation = generation_;
  hooks_.on_db([this, due = std::move(due), generation] {
    for (const auto& [key, token] : due) {
      auto rows =
          pool_.run("hf_ev_lease", Params().text(key).number(static_cast<std::int64_t>(token)));
      if (!rows.ok() || rows->empty()) {
        hooks_.on_loop([this, key, token, generation] {
          if (generation == generation_) checking_.erase({key, token});  // asked again later
        });
        continue;
      }
      const Millis db_now = rows->number(0, 0);
      const bool present = rows->boolean(0, 1);
      const std::optional<Millis> lease = rows->maybe_number(0, 2);
      hooks_.on_loop([this, key, token, present, lease, db_now, generation] {
        if (generation == generation_) checked(key, token, present, lease, db_now);
      });
    }
  });
}

void PgEvents::checked(const std::string& key, std::uint64_t token, bool present,
                       std::optional<Millis> lease, Millis db_now) {
  checking_.erase({key, token});
  auto it = known_.find(key);
  if (it == known_.end() || !it->second.contains(token)) return;  // told meanwhile
  Known& k = it->second.at(token);
  if (!present) {
    // Replaced by a grant whose event is on its way (it tells whether this one expired); no
    // more checks meanwhile.
    if (k.hold.lease_expires_at != kNever)
      lease_ends_.erase({k.hold.lease_expires_at, {key, token}});
    return;
  }
  if (lease && *lease <= db_now) {
    expire_if_known(key, token);
    return;
  }
  // Renewed where this node has not heard yet, or this node's clock runs ahead: look again at
  // the end the database has.
  LockEvent h = k.hold;
  h.lease_expires_at = lease.value_or(kNever);
  remember(h);
}

ToldWaiter::ToldWaiter(PgEvents& events, const LockEvent& who, std::vector<std::string> keys,
                       Millis timeout_ms)
    : events_(events),
      who_(who),
      keys_(std::move(keys)),
      since_(std::chrono::steady_clock::now()),
      timeout_ms_(timeout_ms) {
  who_.waiter = events_.next_waiter_id();
  events_.enlist(*this);
}

ToldWaiter::~ToldWaiter() { events_.discharge(*this); }

std::vector<LockEvent> ToldWaiter::queued_events() const {
  std::vector<LockEvent> out;
  for (const std::string& key : keys_) {
    LockEvent e = who_;
    e.kind = LockEventKind::kQueued;
    e.key = key;
    e.timeout_ms = timeout_ms_;
    out.push_back(std::move(e));
  }
  return out;
}

void PgEvents::enlist(ToldWaiter& waiter) {
  {
    std::lock_guard lock(waiters_mu_);
    live_waiters_.insert(&waiter);
    // Read under the lock: set_cluster_watching() sets the flag before it takes the lock, so a
    // waiter it does not find here sees the flag set.
    if (!cluster_watching_) return;
    waiter.told_ = ToldWaiter::Told::kYes;
  }
  tell_waiters(waiter.queued_events());
}

void PgEvents::discharge(ToldWaiter& waiter) {
  {
    std::unique_lock lock(waiters_mu_);
    live_waiters_.erase(&waiter);
    waiters_cv_.wait(lock, [&] { return waiter.told_ != ToldWaiter::Told::kTelling; });
    if (waiter.told_ == ToldWaiter::Told::kNo) return;
  }
  const Millis waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - waiter.since_)
                            .count();
  std::vector<LockEvent> dequeued;
  for (const std::string& key : waiter.keys_) {
    LockEvent e = waiter.who_;
    e.kind = LockEventKind::kDequeued;
    e.key = key;
    e.reason = waiter.reason_;
    e.waited_ms = waited;
    dequeued.push_back(std::move(e));
  }
  tell_waiters(std::move(dequeued));
}

void PgEvents::set_cluster_watching(bool watching) {
  const bool was = cluster_watching_.exchange(watching);
  if (!watching || was) return;
  std::vector<ToldWaiter*> late;
  {
    std::lock_guard lock(waiters_mu_);
    for (ToldWaiter* w : live_waiters_) {
      if (w->told_ != ToldWaiter::Told::kNo) continue;
      w->told_ = ToldWaiter::Told::kTelling;  // its `dequeued` waits for this `queued`
      late.push_back(w);
    }
  }
  if (late.empty()) return;
  // One statement for all of them: this thread may be the one that hears notifications.
  std::vector<LockEvent> queued;
  for (ToldWaiter* w : late)
    for (LockEvent& e : w->queued_events()) queued.push_back(std::move(e));
  tell_waiters(std::move(queued));
  {
    std::lock_guard lock(waiters_mu_);
    for (ToldWaiter* w : late) w->told_ = ToldWaiter::Told::kYes;
  }
  waiters_cv_.notify_all();
}

void PgEvents::tell_waiters(std::vector<LockEvent> events) {
  const Millis at = wall_now();
  std::vector<std::string> payloads;
  payloads.reserve(events.size());
  for (LockEvent& e : events) {
    e.at = at;
    payloads.push_back(waiter_payload(e));
  }
  auto sent = pool_.run("hf_ev_notify_all", Params().text(channel_).text_array(payloads));
  if (!sent.ok()) spdlog::warn("lock events: telling waiters: {}", sent.error().message);
}

}  // namespace holdfast::pg
