// LockService: what the front ends (RESP, HTTP) ask of the lock server, whatever keeps the
// locks. Two implementations:
//  - EmbeddedService (embedded_service.h): the in-memory LockTable with the write-ahead log,
//    on the event loop thread; calls never block, blocking acquires queue and finish later
//    through WaiterClient, replies wait for the store's durable sequence.
//  - the PostgreSQL node (store/postgres): every call is a short database transaction; calls
//    block (a blocking acquire waits inside the call), so front ends run them off the loop.
//
// Every implementation applies the same checks in the same order (authentication happened in
// the front end; then rules, rate limits, validation, the operation) and answers with the same
// Results, so both transports and both modes speak with one voice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/hold.h"
#include "core/lock_table.h"
#include "core/principal.h"
#include "store/store.h"

namespace holdfast {

class WaiterClient {
 public:
  virtual ~WaiterClient() = default;
  virtual void on_waiter_outcome(const WaiterOutcome& outcome) = 0;
};

// Who is calling, on which connection.
struct Caller {
  const Principal* principal = nullptr;
  SessionId session = 0;
};

struct AcquireArgs {
  std::string_view key;
  Millis ttl_ms = 0;
  Millis timeout_ms = 0;  // 0: one attempt
  std::optional<std::string_view> owner;
  bool session_scoped = false;
};

struct AssignArgs {
  std::string_view key;
  std::string_view holder_id;
  std::optional<Millis> ttl_ms;
  std::optional<Millis> timeout_ms;
};

// Gauges and counters for /metrics.
struct ServiceStats {
  std::size_t held = 0;
  std::size_t waiters = 0;
  LockTableCounters counters;
  StoreStats store;
};

class LockService {
 public:
  virtual ~LockService() = default;

  // acquire (args.timeout_ms > 0 may wait) and tryAcquire (timeout 0). kContended answers nil
  // for try and LOCK_TIMEOUT for acquire. kQueued (non-blocking services only): `client` is
  // told the outcome later.
  virtual Result<AcquireOutcome> acquire(const Caller& caller, const AcquireArgs& args, WaiterClient* client) = 0;
  virtual Result<RenewOutcome> renew(const Caller& caller, std::string_view key, std::string_view handle,
                                     Millis ttl_ms) = 0;
  virtual Result<ReleaseOutcome> release(const Caller& caller, std::string_view key, std::string_view handle) = 0;
  virtual Result<StatusView> status(const Caller& caller, std::string_view key) = 0;
  virtual Result<ListPage> list(const Caller& caller, std::string_view match, std::string_view cursor,
                                std::size_t count) = 0;
  virtual Result<AcquireOutcome> assign(const Caller& caller, const AssignArgs& args, WaiterClient* client) = 0;
  virtual Result<HoldState> transfer(const Caller& caller, std::string_view key, std::string_view to_id,
                                     std::string_view from_id) = 0;
  virtual Result<ReleaseOutcome> unassign(const Caller& caller, std::string_view key,
                                          std::optional<std::string_view> holder_id) = 0;
  virtual Result<HolderView> holder(const Caller& caller, std::string_view key) = 0;

  // The lock rule set (admins, owners and functions only; members get FORBIDDEN). set answers
  // whether an installed set of the same name was replaced; a different name is
  // RULESET_CONFLICT. delete of a name that is not installed is NOT_FOUND.
  virtual Result<bool> set_rule_set(const Caller& caller, std::string_view toml) = 0;
  virtual Result<std::optional<RuleSetPut>> get_rule_set(const Caller& caller) = 0;
  virtual Status delete_rule_set(const Caller& caller, std::string_view name) = 0;

  // The waiter's client no longer wants the outcome.
  virtual void cancel_waiter(WaiterId waiter) = 0;
  // The connection is gone: its waiters leave, its session holds are released.
  virtual void end_session(SessionId session) = 0;

  // True when calls may block (run them off the event loop).
  virtual bool blocking() const = 0;
  // The server is stopping: calls blocked inside the service (a waiting acquire of a blocking
  // service) must return now, with UNAVAILABLE. Called once, on the loop thread.
  virtual void begin_shutdown() {}
  // Replies must not leave before durable_sequence() reaches the last_sequence() seen when
  // they were made. A service whose calls are durable on return answers 0 for both.
  virtual std::uint64_t last_sequence() const = 0;
  virtual std::uint64_t durable_sequence() const = 0;

  // Never blocks: /metrics calls it on the event loop.
  virtual ServiceStats stats() const = 0;
};

}  // namespace holdfast
