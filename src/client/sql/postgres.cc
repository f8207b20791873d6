// PostgreSQL advisory locks through libpq.
//
// Session mode (options.transaction = false):
//   acquire: one simple query "SET LOCAL lock_timeout = 'Nms'; SELECT pg_advisory_lock(K)".
//            Two statements in one simple query run as one implicit transaction, so SET LOCAL
//            bounds just this wait and the caller's own lock_timeout is back afterwards, while
//            the session-level lock outlives the implicit commit. SQLSTATE 55P03 = timeout.
//   finish:  "SELECT pg_advisory_unlock(K)" must answer true. If fn left a failed transaction
//            open, it is rolled back first (it could not commit anyway, and the unlock cannot
//            run inside it).
// Transaction mode (options.transaction = true):
//   acquire: one simple query (so a transaction-pooling PgBouncer keeps it on one server
//            connection):
//              BEGIN; SET LOCAL lock_timeout = 'Nms'; SELECT pg_advisory_lock(K); COMMIT;
//              BEGIN; SELECT pg_advisory_xact_lock(K); SELECT pg_advisory_unlock(K)
//            It waits with a session lock in a throw-away transaction, then opens fn's
//            transaction, where the transaction lock is granted at once (this session already
//            holds K), and drops the session hold, leaving only the transaction lock. Waiting
//            *before* fn's BEGIN matters: under REPEATABLE READ or SERIALIZABLE a transaction's
//            snapshot is taken by its first statement, so waiting inside it would freeze a
//            snapshot from before the previous holder committed. Nothing is SET inside fn's
//            transaction, so fn's statements run with the caller's own settings.
//   finish:  the transaction must still be open (else fn ended it, and the lock with it, early);
//            COMMIT (ROLLBACK when fn threw) ends it and so releases the lock.
//
// K = advisory_key(name). Nothing here polls: the server's lock_timeout bounds every wait.
#include <libpq-fe.h>

#include <string>

#include "holdfast/sql/advisory_lock.h"
#include "pg_query.h"
#include "two_level.h"

namespace holdfast::sql {

PgConnection::PgConnection(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
  if (!conn_) throw ConnectionError("PostgreSQL: out of memory creating a connection");
  if (PQstatus(conn_.get()) != CONNECTION_OK) {
    throw ConnectionError("PostgreSQL: cannot connect: " + pg_error_message(conn_.get(), nullptr));
  }
}

namespace {

constexpr char kLockNotAvailable[] = "55P03";

class PgAdvisoryLock final : public DatabaseLock {
 public:
  PgAdvisoryLock(PGconn* conn, std::string_view name, bool transaction)
      : conn_(conn), key_(std::to_string(advisory_key(name))), transaction_(transaction) {}

  std::string database() const override { return kPostgres; }
  std::string describe() const override { return "key " + key_; }

  bool acquire(std::chrono::milliseconds wait) override {
    check_idle();
    return transaction_ ? acquire_in_transaction(wait) : acquire_for_session(wait);
  }

  std::optional<std::string> finish(bool fn_succeeded) override {
    if (PQstatus(conn_) != CONNECTION_OK) return lost_connection();
    return transaction_ ? end_transaction(fn_succeeded) : unlock_session();
  }

 private:
  void check_idle() const {
    if (conn_ == nullptr) {
      throw InvalidArgumentError("INVALID_ARGUMENT", "PostgreSQL connection is null");
    }
    if (PQstatus(conn_) != CONNECTION_OK) {
      throw ConnectionError("PostgreSQL: connection is not open: " +
                            pg_error_message(conn_, nullptr));
    }
    if (PQpipelineStatus(conn_) != PQ_PIPELINE_OFF) {
      throw InvalidArgumentError("INVALID_ARGUMENT",
                                 "PostgreSQL connection is in pipeline mode; with_advisory_lock "
                                 "needs it off");
    }
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      throw InvalidArgumentError("INVALID_ARGUMENT",
                                 "PostgreSQL connection is inside a transaction block; "
                                 "with_advisory_lock needs an idle connection (commit first)");
    }
  }

  static std::string timeout_setting(std::chrono::milliseconds wait) {
    // lock_timeout = 0 would mean "wait forever"; the budget is always >= 1 s.
    return "SET LOCAL lock_timeout = '" + std::to_string(wait.count()) + "ms'";
  }

  bool acquire_for_session(std::chrono::milliseconds wait) {
    PgResult r = pg_exec(conn_, timeout_setting(wait) + "; SELECT pg_advisory_lock(" + key_ + ")");
    if (pg_succeeded(r.get())) return true;
    if (pg_sqlstate(r.get()) == kLockNotAvailable) return false;
    throw_pg_error(conn_, r.get(), "pg_advisory_lock(" + key_ + ")");
  }

  bool acquire_in_transaction(std::chrono::milliseconds wait) {
    PgResult r = pg_exec(conn_, "BEGIN; " + timeout_setting(wait) + "; SELECT pg_advisory_lock(" +
                                    key_ + "); COMMIT; BEGIN; SELECT pg_advisory_xact_lock(" +
                                    key_ + "); SELECT pg_advisory_unlock(" + key_ + ")");
    if (pg_succeeded(r.get()) && pg_single_value(r.get()) == "t") return true;
    const std::string sqlstate = pg_sqlstate(r.get());
    const std::string message = "pg_advisory_lock(" + key_ + ") then pg_advisory_xact_lock(" +
                                key_ + "): " + pg_error_message(conn_, r.get());
    rollback_quietly();
    if (sqlstate == kLockNotAvailable) return false;
    if (PQstatus(conn_) != CONNECTION_OK) throw ConnectionError("PostgreSQL: " + message);
    // The failure may have come after the session hold was taken: drop it.
    pg_exec(conn_, "SELECT pg_advisory_unlock(" + key_ + ")");
    throw DatabaseError(kPostgres, sqlstate, "PostgreSQL: " + message);
  }

  void rollback_quietly() {
    if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      pg_exec(conn_, "ROLLBACK");
    }
  }

  std::optional<std::string> unlock_session() {
    if (PQtransactionStatus(conn_) == PQTRANS_INERROR) {
      PgResult rollback = pg_exec(conn_, "ROLLBACK");
      if (!pg_succeeded(rollback.get())) {
        return "could not roll back the failed transaction fn left open: " +
               pg_error_message(conn_, rollback.get());
      }
    }
    PgResult r = pg_exec(conn_, "SELECT pg_advisory_unlock(" + key_ + ")");
    if (!pg_succeeded(r.get())) {
      if (PQstatus(conn_) != CONNECTION_OK) return lost_connection();
      return "pg_advisory_unlock(" + key_ + ") failed: " + pg_error_message(conn_, r.get());
    }
    const auto answer = pg_single_value(r.get());
    if (answer == "t") return std::nullopt;
    return "pg_advisory_unlock(" + key_ + ") returned " + answer.value_or("NULL") +
           ": this session did not hold the lock any more (released behind the helper's back?)";
  }

  std::optional<std::string> end_transaction(bool fn_succeeded) {
    switch (PQtransactionStatus(conn_)) {
      case PQTRANS_INTRANS:
        break;
      case PQTRANS_INERROR:
        if (fn_succeeded) {
          PgResult rollback = pg_exec(conn_, "ROLLBACK");
          if (!pg_succeeded(rollback.get())) return rollback_failed(rollback.get());
          throw DatabaseError(kPostgres, "25P02",
                              "PostgreSQL: a statement in fn failed but fn returned normally; the "
                              "transaction was rolled back (the lock is released)");
        }
        break;
      case PQTRANS_IDLE:
        return "the transaction holding the lock ended inside fn (did fn run COMMIT or "
               "ROLLBACK?), so the lock was released before fn returned";
      case PQTRANS_ACTIVE:
        return "fn left a command in progress on the connection; the transaction holding the "
               "lock could not be ended";
      case PQTRANS_UNKNOWN:
        return lost_connection();
    }
    if (!fn_succeeded) {
      PgResult rollback = pg_exec(conn_, "ROLLBACK");
      if (!pg_succeeded(rollback.get())) return rollback_failed(rollback.get());
      return std::nullopt;
    }
    PgResult commit = pg_exec(conn_, "COMMIT");
    if (!pg_succeeded(commit.get())) {
      if (PQstatus(conn_) != CONNECTION_OK) {
        return lost_connection() + "; whether the transaction committed is unknown";
      }
      // A failed COMMIT ends the transaction (rolled back), and the lock with it.
      throw DatabaseError(kPostgres, pg_sqlstate(commit.get()),
                          "PostgreSQL: COMMIT failed, fn's writes were rolled back (the lock is "
                          "released): " +
                              pg_error_message(conn_, commit.get()));
    }
    return std::nullopt;
  }

  std::string rollback_failed(const PGresult* result) {
    if (PQstatus(conn_) != CONNECTION_OK) return lost_connection();
    return "ROLLBACK failed: " + pg_error_message(conn_, result);
  }

  std::string lost_connection() const {
    return "the connection was lost (" + pg_error_message(conn_, nullptr) +
           "); the server frees the lock when it notices the session ended";
  }

  PGconn* conn_;
  std::string key_;  // decimal, safe to splice into SQL
  bool transaction_;
};

}  // namespace

namespace detail {

void lock_postgres(PGconn* conn, std::string_view name, const AdvisoryLockOptions& options,
                   FunctionRef body) {
  check_arguments(name, options);
  PgAdvisoryLock database(conn, name, options.transaction);
  run_two_level(LocalLockTable::process_wide(), name, options, database, body);
}

}  // namespace detail
}  // namespace holdfast::sql
