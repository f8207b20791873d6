// EmbeddedService: the LockService of a single node: who is calling, what they may do, the
// in-memory lock table and the write-ahead log, all on the event loop thread.
//
// Durability contract: every change the table makes is appended to the store as it happens
// (this class is the table's ChangeSink). last_sequence() is the store sequence a reply must
// wait for before it leaves; front ends stamp each reply with it.
//
// Blocking calls: acquire/assign with a timeout may queue. The caller passes a WaiterClient;
// when the waiter is granted or times out, dispatch_outcomes() (run by the loop at one point,
// never from inside another handler) hands the outcome to that client. A client that goes away
// first calls cancel_waiter() or end_session(); a grant that raced with its departure is
// released again so the key does not stay wedged until its lease ends.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/clock.h"
#include "core/lock_table.h"
#include "auth/rate_limiter.h"
#include "auth/rule_set.h"
#include "core/principal.h"
#include "server/lock_service.h"
#include "store/store.h"

namespace holdfast {

struct ServiceOptions {
  LockTableOptions table;
  // Acquire attempts (acquire, tryAcquire, assign) per member user per rolling hour; 0 turns
  // the limit off (local open mode: the one local user is not limited).
  std::int64_t acquire_per_user_per_hour = 0;
};

class EmbeddedService final : public LockService, private ChangeSink {
 public:
  EmbeddedService(const Clock& clock, Store& store, ServiceOptions options = {});
  EmbeddedService(const EmbeddedService&) = delete;
  EmbeddedService& operator=(const EmbeddedService&) = delete;

  // Loads what the store kept. Must be called once before serving.
  Status recover();

  // acquire (args.timeout_ms > 0 may queue: `client` is told the outcome later) and
  // tryAcquire (timeout 0). kContended answers nil for try and LOCK_TIMEOUT for acquire.
  Result<AcquireOutcome> acquire(const Caller& caller, const AcquireArgs& args, WaiterClient* client) override;
  Result<RenewOutcome> renew(const Caller& caller, std::string_view key, std::string_view handle,
                             Millis ttl_ms) override;
  Result<ReleaseOutcome> release(const Caller& caller, std::string_view key, std::string_view handle) override;
  Result<StatusView> status(const Caller& caller, std::string_view key) override;
  Result<ListPage> list(const Caller& caller, std::string_view match, std::string_view cursor,
                        std::size_t count) override;
  Result<AcquireOutcome> assign(const Caller& caller, const AssignArgs& args, WaiterClient* client) override;
  Result<HoldState> transfer(const Caller& caller, std::string_view key, std::string_view to_id,
                             std::string_view from_id) override;
  Result<ReleaseOutcome> unassign(const Caller& caller, std::string_view key,
                                  std::optional<std::string_view> holder_id) override;
  Result<HolderView> holder(const Caller& caller, std::string_view key) override;

  // The lock rule set (admins, owners and functions only; members get FORBIDDEN). set answers
  // whether an installed set of the same name was replaced; a different name is
  // RULESET_CONFLICT. delete of a name that is not installed is NOT_FOUND.
  Result<bool> set_rule_set(const Caller& caller, std::string_view toml) override;
  Result<std::optional<RuleSetPut>> get_rule_set(const Caller& caller) override;
  Status delete_rule_set(const Caller& caller, std::string_view name) override;

  // The waiter's client no longer wants the outcome.
  void cancel_waiter(WaiterId waiter) override;
  // The connection is gone: its waiters leave, its session holds are released.
  void end_session(SessionId session) override;
  // Processes lease ends and waiter timeouts that are due.
  void advance();
  // Delivers waiter outcomes to their clients. Returns how many were delivered.
  std::size_t dispatch_outcomes();
  std::optional<Millis> next_deadline() const;

  bool blocking() const override { return false; }
  std::uint64_t last_sequence() const override { return last_sequence_; }
  std::uint64_t durable_sequence() const override { return store_.durable_sequence(); }
  ServiceStats stats() const override;
  Store& store() { return store_; }
  const LockTable& table() const { return table_; }
  const Clock& clock() const { return clock_; }

 private:
  void on_change(const Change& change) override;
  Millis now() const { return clock_.now_ms(); }
  void release_orphan(const WaiterOutcome& outcome);

  // Rate limits. A blocking acquire or assign over the cap does not fail: it is deferred until
  // the window frees a slot (then it counts once and queues with the time it has left) or its
  // timeout passes (LOCK_TIMEOUT). Deferred requests have ids with the top bit set, so they
  // never collide with the table's waiter ids.
  struct Deferred {
    WaiterId id = 0;
    Millis deadline = 0;
    Millis timeout_ms = 0;
    Principal principal;
    SessionId session = 0;
    bool assign = false;
    std::string key, holder_id;
    std::optional<std::string> owner;
    std::optional<Millis> ttl_ms;  // an assign may have none
    bool session_scoped = false;
    WaiterClient* client = nullptr;
  };
  Deferred make_deferred(const Caller& caller, WaiterClient* client, std::string_view key, Millis timeout_ms) const;
  static constexpr WaiterId kDeferredBit = WaiterId{1} << 63;
  // Counts the attempt; nullopt when allowed, else the wait before a slot frees.
  std::optional<Millis> over_limit(const Principal& principal);
  Result<AcquireOutcome> defer(Deferred d, Millis retry_after_ms);
  void run_deferred(Millis now);
  bool cancel_deferred(WaiterId id);

  std::optional<Error> gate(const Caller& caller, LockOperation op, std::string_view key) const {
    return check_access(rules_ ? &*rules_ : nullptr, *caller.principal, op, key);
  }

  const Clock& clock_;
  Store& store_;
  LockTable table_;
  RateLimiter limiter_;
  std::optional<RuleSet> rules_;
  std::uint64_t last_sequence_ = 0;
  std::unordered_map<WaiterId, WaiterClient*> waiting_;
  std::multimap<Millis, Deferred> deferred_;              // by when to run (or time out)
  std::unordered_map<WaiterId, WaiterId> aliases_;        // deferred id -> table waiter id
  std::vector<std::pair<WaiterClient*, WaiterOutcome>> deferred_outcomes_;
  WaiterId last_deferred_ = 0;
};

}  // namespace holdfast
