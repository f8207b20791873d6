// Database advisory locks (docs/reference.md section 6): run a function while holding a named lock
// that lives in the application's own PostgreSQL or MariaDB/MySQL database, with no Holdfast server
// involved.
//
//   holdfast::sql::PgConnection db("postgresql://app@db/app");
//   int n = holdfast::sql::with_advisory_lock(db, "nightly-report", [&] { return run_report(); });
//
// One call works in three steps (docs/sql-advisory-locks.md has the details per database):
//   1. Wait for the name in this process: callers in one process queue first in, first out on
//      an in-process lock, so at most one of them waits at the database per name.
//   2. Wait for the database lock with whatever remains of options.timeout, but never less
//      than one second; the database enforces that wait (no polling). Timeout at either level
//      throws holdfast::LockTimeoutError naming the lock.
//   3. Run fn, then release the database lock and check that the database confirmed the
//      release; the in-process lock is released last.
//
// The lock is as good as the database session that holds it: if the connection breaks or the
// process dies, the database frees the lock when it notices the session ended. Use the fencing
// helper (holdfast/sql/fencing.h) when a stale holder's writes must be refused.
#pragma once

#include <libpq-fe.h>
#include <mysql.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "holdfast/errors.h"
#include "holdfast/sql/fencing.h"

// SQLite's connection type. Declared, never defined here: the SQLite overload needs no SQLite
// header or library, because it does not touch the connection.
struct sqlite3;

namespace holdfast::sql {

// ---------------------------------------------------------------------------------------------
// Errors (all derive from holdfast::Error; code() gives the stable code string).

// The database did not confirm that the lock was released (code
// "ADVISORY_LOCK_RELEASE_FAILED"): the unlock call answered false or NULL, the connection broke,
// or, in transaction mode, the transaction that held the lock ended before fn returned. The
// lock may still be held by that session until it ends; another session cannot rely on it
// having been held for the whole of fn. what() says which case it was.
class AdvisoryLockReleaseFailed : public Error {
 public:
  AdvisoryLockReleaseFailed(std::string name, std::string database, const std::string& reason)
      : Error("ADVISORY_LOCK_RELEASE_FAILED",
              "advisory lock '" + name + "' (" + database + "): release not confirmed: " + reason,
              {{"name", name}, {"database", database}}),
        name_(std::move(name)),
        database_(std::move(database)) {}
  // The lock name as the caller passed it to with_advisory_lock.
  const std::string& name() const noexcept { return name_; }
  // "PostgreSQL" or "MariaDB/MySQL".
  const std::string& database() const noexcept { return database_; }

 private:
  std::string name_;
  std::string database_;
};

// The database has no advisory locks this library can use (code "UNSUPPORTED_DATABASE"), or
// the requested mode is not available on it (transaction = true on SQLite).
class UnsupportedDatabase : public Error {
 public:
  UnsupportedDatabase(std::string database, const std::string& message)
      : Error("UNSUPPORTED_DATABASE", message, {{"database", database}}),
        database_(std::move(database)) {}
  const std::string& database() const noexcept { return database_; }

 private:
  std::string database_;
};

// A statement failed for a reason other than a lock timeout or a lost connection (code
// "DATABASE_ERROR"), e.g. a deadlock between two advisory locks or a failed COMMIT. sqlstate()
// is the five-character SQLSTATE when the database sent one, else empty. Lost connections are
// reported as holdfast::ConnectionError instead.
class DatabaseError : public Error {
 public:
  DatabaseError(std::string database, std::string sqlstate, const std::string& message)
      : Error("DATABASE_ERROR", message, {{"database", database}, {"sqlstate", sqlstate}}),
        sqlstate_(std::move(sqlstate)) {}
  const std::string& sqlstate() const noexcept { return sqlstate_; }

 private:
  std::string sqlstate_;
};

// ---------------------------------------------------------------------------------------------
// Options.

struct AdvisoryLockOptions {
  // The longest the call waits in all: first for other callers of the same name in this
  // process, then for the database lock with what is left, never less than one second at the
  // database (so a short timeout still gives a busy database a fair chance). The total wait is
  // therefore about max(timeout, 1 s). REQUIRES: timeout >= 0.
  std::chrono::milliseconds timeout = std::chrono::seconds(10);

  // false: a session lock; fn's queries run as the caller issues them (autocommit or the
  //   caller's own transactions). The connection must not be inside a transaction on entry.
  // true: the lock, fn's queries and the release share one transaction on the connection, so
  //   fn's writes commit only while the lock is held, and roll back when fn throws.
  //   PostgreSQL: wait for the lock, BEGIN, pg_advisory_xact_lock, fn, COMMIT (ROLLBACK when
  //   fn throws); the wait happens before BEGIN so REPEATABLE READ snapshots are fresh.
  //   MariaDB/MySQL: GET_LOCK, START TRANSACTION, fn, COMMIT/ROLLBACK, RELEASE_LOCK.
  //   Not available on SQLite (UnsupportedDatabase).
  bool transaction = false;

  // When fn throws AND the release is not confirmed, fn's exception wins: it propagates
  // unchanged, and the release failure is handed to this function (called on the caller's
  // thread, before fn's exception continues; exceptions it throws are ignored). Empty: one line
  // is written to std::clog instead, so the failure is never silent.
  std::function<void(const AdvisoryLockReleaseFailed&)> on_suppressed_release_failure = {};
};

// ---------------------------------------------------------------------------------------------
// Names and keys, so operators can find a lock from its name.

// The PostgreSQL advisory lock key of `name`: the first 8 bytes of SHA-256 over the name's
// bytes, read big-endian as a signed 64-bit integer. SHA-256 because PostgreSQL computes it too
// (sha256(), PostgreSQL 11+), so the key of a name can be derived in SQL:
//   ('x' || left(encode(sha256(convert_to(NAME, 'UTF8')), 'hex'), 16))::bit(64)::bigint
// and because it is specified and stable, unlike PostgreSQL's internal hashtext(). Two names
// share a key with probability about n^2 / 2^65 for n names (1 in 30 million for a million).
std::int64_t advisory_key(std::string_view name);

// Lists the sessions holding or waiting for the advisory lock of a name ($1 = the name) in the
// current database, using the SQL form of advisory_key: pg_locks shows a bigint key split into
// classid (high 32 bits) and objid (low 32 bits) with objsubid = 1. Columns: pid, granted,
// mode, application_name, state, backend_start.
inline constexpr std::string_view kPgLocksByNameQuery = R"sql(
SELECT l.pid, l.granted, l.mode, a.application_name, a.state, a.backend_start
FROM pg_locks l
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND ((l.classid::bigint << 32) | l.objid::bigint)
      = ('x' || left(encode(sha256(convert_to($1, 'UTF8')), 'hex'), 16))::bit(64)::bigint
ORDER BY l.granted DESC, l.pid)sql";

// MariaDB/MySQL lock names are limited to 64 characters.
inline constexpr std::size_t kMysqlLockNameMaxChars = 64;

// The GET_LOCK name used for `name`: the name itself when it has at most 64 characters (UTF-8
// code points), else its first 31 characters, '~', and the first 32 hex digits of SHA-256 over
// the whole name: exactly 64 characters, still readable, and the same as the SQL
//   IF(CHAR_LENGTH(n) <= 64, n, CONCAT(LEFT(n, 31), '~', LEFT(SHA2(n, 256), 32)))
// on a utf8mb4 connection. Note that MariaDB/MySQL compare lock names case-insensitively.
std::string mysql_lock_name(std::string_view name);

// ---------------------------------------------------------------------------------------------
// Connections.

struct PgConnDeleter {
  void operator()(PGconn* conn) const noexcept { PQfinish(conn); }
};

// An owning PostgreSQL connection. Not thread-safe: one thread at a time, like PGconn.
class PgConnection {
 public:
  // Connects with a libpq connection string or URL ("postgresql://user@host:port/db").
  // Throws holdfast::ConnectionError with libpq's message when the connection fails.
  explicit PgConnection(const std::string& conninfo);

  // The libpq handle, valid while this object lives. Never null.
  PGconn* get() const noexcept { return conn_.get(); }

 private:
  std::unique_ptr<PGconn, PgConnDeleter> conn_;
};

// Another database, named for messages (e.g. "SQL Server", "CockroachDB"): every call with it
// throws UnsupportedDatabase.
struct OtherDatabase {
  std::string product;
};

// A connection whose kind is chosen at run time, for code that serves several databases.
using DatabaseHandle = std::variant<PGconn*, MYSQL*, sqlite3*, OtherDatabase>;

// ---------------------------------------------------------------------------------------------
// Internals the templates below need; not part of the contract.
namespace detail {

// A non-owning reference to a void() callable; valid while the callable lives.
class FunctionRef {
 public:
  template <typename F>
  explicit FunctionRef(F& f) noexcept
      : object_(static_cast<void*>(&f)), call_([](void* o) { (*static_cast<F*>(o))(); }) {}
  void operator()() const { call_(object_); }

 private:
  void* object_;
  void (*call_)(void*);
};

void lock_postgres(PGconn* conn, std::string_view name, const AdvisoryLockOptions& options,
                   FunctionRef body);
void lock_mysql(MYSQL* conn, std::string_view name, const AdvisoryLockOptions& options,
                FunctionRef body);
void lock_sqlite(std::string_view name, const AdvisoryLockOptions& options, FunctionRef body);
[[noreturn]] void throw_unsupported(const OtherDatabase& database);

// Calls run(body) where body invokes fn once and keeps its result, then returns that result.
template <typename Fn, typename Run>
std::invoke_result_t<Fn> call_keeping_result(Fn&& fn, Run&& run) {
  using R = std::invoke_result_t<Fn>;
  if constexpr (std::is_void_v<R>) {
    auto body = [&] { std::invoke(std::forward<Fn>(fn)); };
    run(FunctionRef(body));
  } else if constexpr (std::is_reference_v<R>) {
    std::remove_reference_t<R>* result = nullptr;
    auto body = [&] { result = &std::invoke(std::forward<Fn>(fn)); };
    run(FunctionRef(body));
    return static_cast<R>(*result);
  } else {
    std::optional<R> result;
    auto body = [&] { result.emplace(std::invoke(std::forward<Fn>(fn))); };
    run(FunctionRef(body));
    return std::move(*result);
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// with_advisory_lock: runs fn() while holding the advisory lock `name` and returns its result
// (void when fn returns void). Common contract of every overload:
//   - REQUIRES: name is not empty; options.timeout >= 0; the connection is open and used by no
//     other thread during the call. Violations throw holdfast::InvalidArgumentError.
//   - Not reentrant: calling it again for the same name from inside fn (same thread) throws
//     holdfast::InvalidArgumentError at once instead of waiting for itself.
//   - Timeout at either level: holdfast::LockTimeoutError (key() = name); fn did not run.
//   - Other database failures before fn: DatabaseError or holdfast::ConnectionError; fn did not
//     run and nothing is held.
//   - The release always runs, whether fn returns or throws. fn's exception propagates
//     unchanged; a release the database did not confirm then goes to
//     options.on_suppressed_release_failure. When fn returned, an unconfirmed release throws
//     AdvisoryLockReleaseFailed (fn's result is dropped).

// PostgreSQL. REQUIRES: conn is idle (not inside a transaction block, not in pipeline mode).
// Waits with SET LOCAL lock_timeout + pg_advisory_lock(advisory_key(name)) in one implicit
// transaction, so the caller's lock_timeout is untouched. Session mode: pg_advisory_unlock must
// answer true; a failed transaction fn left open is rolled back first so the unlock can run.
// Transaction mode: the same wait in a throw-away transaction, then BEGIN, where the session
// hold becomes a pg_advisory_xact_lock (all in one round trip). fn must leave the transaction
// open. A failing COMMIT (the transaction rolled back, the lock released), or a statement that
// failed inside fn without fn throwing (rolled back), throws DatabaseError.
template <typename Fn>
std::invoke_result_t<Fn> with_advisory_lock(PGconn* conn, std::string_view name, Fn&& fn,
                                            const AdvisoryLockOptions& options = {}) {
  return detail::call_keeping_result(std::forward<Fn>(fn), [&](detail::FunctionRef body) {
    detail::lock_postgres(conn, name, options, body);
  });
}

template <typename Fn>
std::invoke_result_t<Fn> with_advisory_lock(PgConnection& conn, std::string_view name, Fn&& fn,
                                            const AdvisoryLockOptions& options = {}) {
  return with_advisory_lock(conn.get(), name, std::forward<Fn>(fn), options);
}

// MariaDB/MySQL. REQUIRES: mysql_library_init() has run before threads use the library;
// in transaction mode, conn is not inside a transaction. Waits with
// GET_LOCK(mysql_lock_name(name), seconds) (fractional seconds on MariaDB 10.1.2+; other
// servers may round to whole seconds); RELEASE_LOCK must answer 1. Transaction mode: GET_LOCK,
// START TRANSACTION, fn; commits only after checking that this session still holds the lock
// (else rolls back and throws AdvisoryLockReleaseFailed), and releases after COMMIT so the
// lock covers the commit.
template <typename Fn>
std::invoke_result_t<Fn> with_advisory_lock(MYSQL* conn, std::string_view name, Fn&& fn,
                                            const AdvisoryLockOptions& options = {}) {
  return detail::call_keeping_result(std::forward<Fn>(fn), [&](detail::FunctionRef body) {
    detail::lock_mysql(conn, name, options, body);
  });
}

// SQLite: a no-op that runs fn and returns its result. SQLite has no named locks, and its
// database-file locking already serializes writers; there is no in-process lock either, so
// two callers run fn at the same time. options.transaction = true throws UnsupportedDatabase
// (the helper cannot open a SQLite transaction); conn may be null.
template <typename Fn>
std::invoke_result_t<Fn> with_advisory_lock(sqlite3* /*conn*/, std::string_view name, Fn&& fn,
                                            const AdvisoryLockOptions& options = {}) {
  return detail::call_keeping_result(std::forward<Fn>(fn), [&](detail::FunctionRef body) {
    detail::lock_sqlite(name, options, body);
  });
}

// A connection chosen at run time: dispatches to the overloads above; OtherDatabase throws
// UnsupportedDatabase naming the product, without running fn.
template <typename Fn>
std::invoke_result_t<Fn> with_advisory_lock(const DatabaseHandle& database, std::string_view name,
                                            Fn&& fn, const AdvisoryLockOptions& options = {}) {
  if (auto* pg = std::get_if<PGconn*>(&database)) {
    return with_advisory_lock(*pg, name, std::forward<Fn>(fn), options);
  }
  if (auto* my = std::get_if<MYSQL*>(&database)) {
    return with_advisory_lock(*my, name, std::forward<Fn>(fn), options);
  }
  if (auto* lite = std::get_if<sqlite3*>(&database)) {
    return with_advisory_lock(*lite, name, std::forward<Fn>(fn), options);
  }
  detail::throw_unsupported(std::get<OtherDatabase>(database));
}

}  // namespace holdfast::sql
