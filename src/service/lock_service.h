// LockService: what the front ends (RESP, HTTP) ask of the lock server, whoever keeps the
// locks. The policy layer (policy.h) implements it over one of two backends (backend.h): the
// embedded lock table with its write-ahead log, or a node over PostgreSQL.
//
// The life of a call:
//  1. The front end issues it on the loop thread with a Completion it owns. The call returns at
//     once: kApplied when it has already taken effect (calls issued after it see its effects),
//     kWaiting when it has not yet (a blocking acquire in a queue, a database round trip).
//     After kWaiting the front end issues nothing more for that session until the call
//     finishes: a blocked command blocks its connection, as in Redis.
//  2. The service finishes it exactly once, on the loop thread, with its Answer or an Error:
//     at once, after a queue, after the log made it durable, or after the database answered.
//     A reply never leaves before everything it depends on is durable: the backend holds the
//     completion until then. Calls of one session finish in the order they were issued.
//  3. end_session(s) ends a connection: its waiting calls finish with UNAVAILABLE, a grant
//     that raced with the end is released, its session holds are released.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/hold.h"
#include "core/lock_event.h"
#include "core/lock_request.h"
#include "core/lock_types.h"
#include "core/principal.h"
#include "core/script_reply.h"
#include "core/values/value_reply.h"
#include "core/values/value_request.h"
#include "store/store.h"

namespace holdfast {

// Who is calling, on which connection. The principal outlives every call it makes.
struct Caller {
  const Principal* principal = nullptr;
  SessionId session = 0;
};

// Arguments are views valid for the duration of the issuing call only: a service that needs
// them later copies them (core/lock_request.h has the acquire's and the assign's copies).
struct RenewArgs {
  std::string_view key;
  std::string_view handle;
  Millis ttl_ms = 0;
};

struct ReleaseArgs {
  std::string_view key;
  std::string_view handle;
};

struct ListArgs {
  std::string_view match;         // a glob; empty: every key
  std::string_view cursor = "0";  // "0": from the start
  std::size_t count = kDefaultListPage;
};

// Identity-aware holds (AssignArgs in core/lock_request.h): the policy resolves a holder id
// the call left out before the rules see it, so a backend always gets transfer's from_id and
// check's holder_id set; unassign's stays empty only for "whoever holds it".
struct TransferArgs {
  std::string_view key;
  std::string_view to_id;
  std::optional<std::string_view> from_id;
};

struct UnassignArgs {
  std::string_view key;
  std::optional<std::string_view> holder_id;
};

struct CheckArgs {
  std::string_view key;
  std::optional<std::string_view> holder_id;
};

// The Redis lock idiom over the same keys (docs/redis-locks.md): SET, DEL, PEXPIRE and their
// kin act on holds. A key set this way is a hold like any other (a token, a lease, rules, the
// log); its value is the hold's owner, which GET answers.
enum class SetCondition : std::uint8_t {
  kAlways,     // SET: a free key, or one held by the caller's own principal (replaced)
  kIfAbsent,   // SET NX: a free key only
  kIfPresent,  // SET XX: a key held by the caller's own principal only
};

struct SetArgs {
  std::string_view key;
  std::string_view value;
  std::optional<Millis> ttl_ms;      // none: the lease cap
  std::optional<Millis> expires_at;  // instead of ttl_ms: an instant (EXAT, PXAT)
  bool keep_ttl = false;             // KEEPTTL: a replaced hold keeps its lease end
  bool get = false;                  // GET: answer the value the key had
  SetCondition condition = SetCondition::kAlways;
};

// SET's answer: whether the key was set, and the value it had before (nullopt: free).
struct SetOutcome {
  bool set = false;
  std::optional<std::string> previous;
  bool get = false;  // SetArgs::get: the reply is `previous`
};

// PEXPIRE's NX, XX, GT, LT, and XX LT together (GT with XX is GT).
enum class ExpireCondition : std::uint8_t {
  kAlways,
  kIfNone,
  kIfSome,
  kIfLater,
  kIfEarlier,
  kIfSomeEarlier,
};

struct ExpireArgs {
  std::string_view key;
  Millis amount = 0;      // milliseconds
  bool absolute = false;  // amount is an instant (PEXPIREAT) rather than a TTL (PEXPIRE)
  bool persist = false;   // PERSIST: as long as a lease may last
  ExpireCondition condition = ExpireCondition::kAlways;
};

// How many keys an operation acted on (DEL, EXISTS) or 1/0 (PEXPIRE).
struct KeyCount {
  std::int64_t count = 0;
};

// The answer of GET: the value SET stored with a held key (for a shared or semaphore key, its
// newest hold's, as status shows it); nullopt when the key is not held.
struct StoredValue {
  std::optional<std::string> value;
};

// The answer of RULES.SET: the installed set's name and whether it replaced one.
struct RuleSetStored {
  std::string name;
  bool replaced = false;
};

// What a call answers; the operation decides which alternative:
//   acquire, try_acquire (granted), assign, transfer  HoldState
//   acquire_all, try_acquire_all (granted)            GroupHold
//   try_acquire (held by another)                      std::monostate (nil)
//   renew RenewOutcome, release and unassign ReleaseOutcome, status StatusView, list ListPage,
//   holder and check HolderView, set_rule_set RuleSetStored, get_rule_set
//   std::optional<RuleSetPut>, delete_rule_set std::monostate, set_value SetOutcome, get_value
//   StoredValue, delete_keys, count_held and expire KeyCount; a script's reply, finished through
//   complete(), ScriptReply; value ValueReply.
using Answer = std::variant<std::monostate, HoldState, RenewOutcome, ReleaseOutcome, StatusView,
                            ListPage, HolderView, RuleSetStored, std::optional<RuleSetPut>,
                            SetOutcome, KeyCount, ScriptReply, GroupHold, StoredValue, ValueReply>;

class Completion {
 public:
  // Exactly once per call, on the loop thread.
  virtual void finish(Result<Answer> result) = 0;
  // True for a call whose answer is not a reply but input to more work on the loop (a
  // script's redis.call): a call that took effect (kApplied) finishes inside the issuing call,
  // without waiting for the log. Whatever reply that work makes waits for the log instead
  // (LockService::complete()).
  virtual bool immediate() const { return false; }

 protected:
  ~Completion() = default;
};

enum class Issued : std::uint8_t {
  kApplied,  // the call took effect; it may still finish later (its reply waits for the log)
  kWaiting,  // the call has not taken effect yet; issue nothing more for this session
};

// Gauges and counters for /metrics.
// A node over PostgreSQL: what it knows of the database it writes to (docs/scale-out.md).
struct StoreReplication {
  std::string state = "unknown";       // "synchronous", "asynchronous", or "unknown" (not read yet)
  std::string warning;                 // why it is unsafe, or what else to know; empty: nothing
  std::int64_t sync_standbys = -1;     // synchronous standbys connected; -1: not visible
  bool required = false;               // requireSyncReplication: writes refused while unsafe
  std::string primary;                 // host:port of the server written to; empty: none known
  std::int64_t timeline = 0;           // the newest timeline of the primary seen
  std::uint64_t primary_changes = 0;   // times the primary changed or was lost
  std::uint64_t unsettled_writes = 0;  // writes of unknown outcome not yet settled
};

struct ServiceStats {
  std::size_t held = 0;
  std::size_t values = 0;  // keys holding a typed value (DBSIZE counts them with `held`)
  std::size_t waiters = 0;
  LockCounters counters;
  StoreStats store;
  // After an unclean stop in the horizon durability mode: until this instant nothing new is
  // granted (docs/horizon.md). 0: granting.
  Millis recovering_until = 0;
  // The grants of `counters`, by the mode of the hold, indexed by LockMode. None: the backend
  // grants exclusive holds only.
  std::optional<std::array<std::uint64_t, 3>> grants_by_mode;
  // The holds of `held` by mode, indexed by LockMode, and the permits the semaphore holds take.
  // None: the backend does not count them.
  std::optional<std::array<std::size_t, 3>> held_by_mode;
  std::uint64_t permits_held = 0;
  // None: not a node over PostgreSQL.
  std::optional<StoreReplication> replication;
};

class LockService {
 public:
  virtual ~LockService() = default;

  // Waits up to args.timeout_ms in the key's FIFO queue; LOCK_TIMEOUT when it does not win.
  virtual Issued acquire(const Caller& caller, const AcquireArgs& args, Completion& done) = 0;
  // One attempt (args.timeout_ms is ignored): the hold, or nil when another holds the key.
  virtual Issued try_acquire(const Caller& caller, const AcquireArgs& args, Completion& done) = 0;
  // Several keys, granted together or not at all; waits as acquire does (LOCK_TIMEOUT naming
  // the first key), or makes one attempt (nil when any key is taken or has waiters).
  virtual Issued acquire_all(const Caller& caller, const AcquireAllArgs& args,
                             Completion& done) = 0;
  virtual Issued try_acquire_all(const Caller& caller, const AcquireAllArgs& args,
                                 Completion& done) = 0;
  virtual Issued renew(const Caller& caller, const RenewArgs& args, Completion& done) = 0;
  virtual Issued release(const Caller& caller, const ReleaseArgs& args, Completion& done) = 0;
  virtual Issued status(const Caller& caller, std::string_view key, Completion& done) = 0;
  virtual Issued list(const Caller& caller, const ListArgs& args, Completion& done) = 0;
  virtual Issued assign(const Caller& caller, const AssignArgs& args, Completion& done) = 0;
  virtual Issued transfer(const Caller& caller, const TransferArgs& args, Completion& done) = 0;
  virtual Issued unassign(const Caller& caller, const UnassignArgs& args, Completion& done) = 0;
  virtual Issued holder(const Caller& caller, std::string_view key, Completion& done) = 0;
  // The holder check (core/holder_check.h): the assigned hold with its token when the holder
  // id holds the key, else LOCK_NOT_HOLDER. Open to every caller, like holder().
  virtual Issued check(const Caller& caller, const CheckArgs& args, Completion& done) = 0;

  // The Redis lock idiom (docs/redis-locks.md). set_value takes a key as SET does (an acquire
  // for the rules and the rate limit); delete_keys frees keys held by the caller's principal
  // (any holder for admins, owners and functions); expire moves such a hold's lease end (a
  // renew for the rules); count_held counts the held keys. get_value is GET: status's value
  // alone, without the rest of the status to copy. PTTL is status().
  virtual Issued set_value(const Caller& caller, const SetArgs& args, Completion& done) = 0;
  virtual Issued get_value(const Caller& caller, std::string_view key, Completion& done) = 0;
  virtual Issued delete_keys(const Caller& caller, std::span<const std::string_view> keys,
                             Completion& done) = 0;
  virtual Issued expire(const Caller& caller, const ExpireArgs& args, Completion& done) = 0;
  virtual Issued count_held(const Caller& caller, std::span<const std::string_view> keys,
                            Completion& done) = 0;

  // Typed values (docs/redis-locks.md, "Typed values"): a command on a counter, sorted set,
  // hash or list (core/values/value_request.h), and TYPE, PTTL and GETDEL on any key; answers
  // a ValueReply. The other Redis-idiom calls above act on typed values too: get_value reads a
  // counter, delete_keys deletes values, expire moves a value's expiry as Redis does, and
  // count_held counts keys holding one; the lock calls answer WRONGTYPE on a key holding one.
  // A write goes through the rule set as an acquire of the key whose request.operation is
  // "write" (docs/auth.md); reads are open to every caller, like status.
  virtual Issued value(const Caller& caller, const ValueRequest& request, Completion& done) = 0;

  // The lock rule set (admins, owners and functions only; members get FORBIDDEN). A set of
  // another name than the installed one is RULESET_CONFLICT; deleting a name that is not
  // installed is NOT_FOUND.
  virtual Issued set_rule_set(const Caller& caller, std::string_view toml, Completion& done) = 0;
  virtual Issued get_rule_set(const Caller& caller, Completion& done) = 0;
  virtual Issued delete_rule_set(const Caller& caller, std::string_view name, Completion& done) = 0;

  // Runs `body` as one step (a transaction's commands, a script): the calls it makes on this
  // service take effect together, with nothing of another session between them, and each
  // takes effect at once (kApplied), so a script's redis.call has its answer before the script
  // goes on. Where calls apply at once on the loop (the embedded store) that is running `body`
  // with the clock stopped at the instant it starts (one instant for a script, as in Redis); a
  // node over PostgreSQL runs body's calls on the loop, one after another, in one database
  // transaction (each finishes before it returns; a blocking acquire makes one attempt).
  // The error: the transaction could not be begun or committed, so none of body's calls took
  // effect.
  virtual Status atomically(const std::function<void()>& body) {
    body();
    return ok_status();
  }
  // Finishes `done` with `result` in its place: after the answers of every call issued before
  // it, and once every change made so far is durable. For replies the front end makes from
  // calls of its own (a script's).
  virtual void complete(Completion& done, Result<Answer> result) = 0;

  // The connection is gone (see the top of this file).
  virtual void end_session(SessionId session) = 0;
  // The server is stopping: every waiting call finishes now with UNAVAILABLE. Once.
  virtual void shutdown() = 0;

  // The loop's hooks (server/loop_driver.h), on the loop thread:
  // delivers what became ready (waiters' outcomes, replies the log made durable, database
  // answers) and hands new log records to the writer; after every piece of work.
  virtual void dispatch() = 0;
  // runs what is due by the clock (lease ends, waiter timeouts, rate-limited retries).
  virtual void advance() = 0;
  // the wall-clock instant advance() next has work, if any.
  virtual std::optional<Millis> next_deadline() const = 0;

  // Never blocks: /metrics and INFO call it on the loop.
  virtual ServiceStats stats() const = 0;

  // Lock events (docs/events.md): while `sink` is set, every change, expiry and waiter's
  // arrival and departure is told to it, on the loop thread, in order per key, never before
  // what it reports is durable. Null: nobody watches, and no event is made at all.
  virtual void set_event_sink(LockEventSink* sink) { (void)sink; }
  // Whether `caller` may see events of `key`: the rules of docs/events.md ("Who sees what").
  virtual bool may_read(const Principal& caller, std::string_view key) const {
    (void)caller;
    (void)key;
    return true;
  }
  // Whether may_read(caller, key) holds for every key now (no rule set decides it), so that
  // events can be told to `caller` without asking key by key.
  virtual bool may_read_all(const Principal& caller) const {
    (void)caller;
    return true;
  }
};

// Asks the loop to call dispatch() soon. Thread-safe; many requests may become one call.
using WakeLoop = std::function<void()>;

}  // namespace holdfast
