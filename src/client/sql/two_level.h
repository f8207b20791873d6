// The database-independent half of with_advisory_lock: the two waits, the time budget between
// them, running fn, and the verified release with its exception rules.
//
// run_two_level, step by step:
//   1. Check the arguments (name not empty, timeout >= 0).
//   2. deadline = now + timeout. Wait for the name in the in-process LocalLockTable until the
//      deadline; on timeout throw LockTimeoutError without touching the database.
//   3. Ask the database for its lock with database_wait_budget(deadline, now): the time left,
//      but at least one second. false (the database's own timeout fired) throws
//      LockTimeoutError.
//   4. Run fn. If it throws, call finish(false) inside the handler, hand an unconfirmed release
//      to on_suppressed_release_failure (or std::clog), and rethrow fn's exception with
//      `throw;`, so even a forced unwind (thread cancellation) passes through unchanged.
//   5. If fn returned, finish(true); an unconfirmed release throws AdvisoryLockReleaseFailed.
//   6. The in-process guard is destroyed last, so the next caller in this process finds the
//      database lock already released.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "holdfast/sql/advisory_lock.h"
#include "local_lock.h"

namespace holdfast::sql {

// The database's side of one with_advisory_lock call. One object per call; not reused.
class DatabaseLock {
 public:
  virtual ~DatabaseLock() = default;

  // "PostgreSQL", "MariaDB/MySQL": for error messages and AdvisoryLockReleaseFailed.
  virtual std::string database() const = 0;

  // How the database names this lock, for messages, e.g. "key 123" or "GET_LOCK name 'x'".
  virtual std::string describe() const = 0;

  // Waits up to `wait` (the database enforces it). true: the lock is held (and, in transaction
  // mode, the transaction is open). false: the database's timeout fired; nothing is held.
  // Throws DatabaseError, ConnectionError or InvalidArgumentError on other failures, leaving
  // nothing held and no transaction of ours open.
  virtual bool acquire(std::chrono::milliseconds wait) = 0;

  // Ends the critical section: commit (fn_succeeded) or roll back (transaction mode) and
  // release the lock. nullopt when the database confirmed the release, else the reason.
  // With fn_succeeded = true it may throw DatabaseError when the commit failed although the
  // lock was released (fn's writes are then rolled back).
  virtual std::optional<std::string> finish(bool fn_succeeded) = 0;
};

// How long to let the database wait, given the overall deadline: what is left, but never less
// than one second, so callers that spent their time queueing in-process still get a real try.
std::chrono::milliseconds database_wait_budget(std::chrono::steady_clock::time_point deadline,
                                               std::chrono::steady_clock::time_point now);

inline constexpr std::chrono::milliseconds kMinDatabaseWait = std::chrono::seconds(1);

// Runs body under both levels; see the top of this file. `local` is passed in (rather than
// always the process-wide table) so tests can use a private table.
void run_two_level(LocalLockTable& local, std::string_view name, const AdvisoryLockOptions& options,
                   DatabaseLock& database, detail::FunctionRef body);

// Throws InvalidArgumentError unless name is non-empty and options.timeout >= 0.
void check_arguments(std::string_view name, const AdvisoryLockOptions& options);

}  // namespace holdfast::sql
