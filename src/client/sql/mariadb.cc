// MariaDB/MySQL advisory locks through the MariaDB C API (works against MySQL servers too).
//
// The lock is GET_LOCK(mysql_lock_name(name), seconds): 1 = acquired, 0 = the server's timeout
// fired, NULL = error. It belongs to the session, not to a transaction.
// Session mode:
//   acquire: SELECT GET_LOCK(n, s)           finish: SELECT RELEASE_LOCK(n), which must be 1
//            (0 = another session holds it, NULL = nobody holds it: released behind our back).
// Transaction mode:
//   acquire: GET_LOCK first, then START TRANSACTION, so a REPEATABLE READ snapshot (InnoDB's
//            default) is taken after the lock is ours and fn sees the previous holder's commit.
//   finish:  check IS_USED_LOCK(n) = CONNECTION_ID() (the lock still covers fn's writes), then
//            COMMIT, then RELEASE_LOCK, so the lock also covers the commit and the next holder
//            cannot read the state before it. If the check fails, the writes are rolled back.
//            When fn threw: ROLLBACK, then RELEASE_LOCK.
// (Releasing before COMMIT would let the next holder read the state from before it:
// docs/sql-advisory-locks.md, "MariaDB/MySQL, order of the transaction steps".)
#include <errmsg.h>
#include <mysql.h>

#include <cstdio>
#include <string>

#include "holdfast/sql/advisory_lock.h"
#include "two_level.h"

namespace holdfast::sql {
namespace {

constexpr char kMariaDb[] = "MariaDB/MySQL";

bool connection_lost(unsigned int error) {
  return error == CR_SERVER_GONE_ERROR || error == CR_SERVER_LOST;
}

struct MysqlResultDeleter {
  void operator()(MYSQL_RES* result) const noexcept { mysql_free_result(result); }
};

// The outcome of one statement: ok, and for a SELECT its first value (nullopt = NULL).
struct Answer {
  bool ok = false;
  std::optional<std::string> value;
  unsigned int error = 0;
  std::string message;
  std::string sqlstate;
};

Answer run(MYSQL* conn, const std::string& sql) {
  Answer answer;
  if (mysql_real_query(conn, sql.data(), sql.size()) == 0) {
    std::unique_ptr<MYSQL_RES, MysqlResultDeleter> result(mysql_store_result(conn));
    if (result) {
      if (MYSQL_ROW row = mysql_fetch_row(result.get()); row != nullptr && row[0] != nullptr) {
        answer.value = std::string(row[0], mysql_fetch_lengths(result.get())[0]);
      }
      answer.ok = true;
      return answer;
    }
    if (mysql_field_count(conn) == 0) {  // a statement without a result set
      answer.ok = true;
      return answer;
    }
  }
  answer.error = mysql_errno(conn);
  answer.message = mysql_error(conn);
  answer.sqlstate = mysql_sqlstate(conn);
  return answer;
}

[[noreturn]] void throw_error(const Answer& failed, const std::string& what) {
  const std::string message = "MariaDB/MySQL: " + what + ": " + failed.message;
  if (connection_lost(failed.error)) throw ConnectionError(message);
  throw DatabaseError(kMariaDb, failed.sqlstate, message);
}

class MysqlAdvisoryLock final : public DatabaseLock {
 public:
  MysqlAdvisoryLock(MYSQL* conn, std::string_view name, bool transaction)
      : conn_(conn), transaction_(transaction) {
    if (conn_ == nullptr) {
      throw InvalidArgumentError("INVALID_ARGUMENT", "MariaDB/MySQL connection is null");
    }
    const std::string lock_name = mysql_lock_name(name);
    std::string escaped(lock_name.size() * 2 + 1, '\0');
    escaped.resize(
        mysql_real_escape_string(conn_, escaped.data(), lock_name.data(), lock_name.size()));
    literal_ = "'" + escaped + "'";
  }

  std::string database() const override { return kMariaDb; }
  std::string describe() const override { return "GET_LOCK name " + literal_; }

  bool acquire(std::chrono::milliseconds wait) override {
    if (transaction_) check_no_transaction();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%lld.%03lld",
                  static_cast<long long>(wait.count() / 1000),
                  static_cast<long long>(wait.count() % 1000));
    const Answer got = run(conn_, "SELECT GET_LOCK(" + literal_ + ", " + seconds + ")");
    if (!got.ok) throw_error(got, "GET_LOCK(" + literal_ + ")");
    if (got.value == "0") return false;
    if (got.value != "1") {
      throw DatabaseError(kMariaDb, "",
                          "MariaDB/MySQL: GET_LOCK(" + literal_ + ") returned " +
                              got.value.value_or("NULL") + " (error or killed)");
    }
    if (transaction_) {
      const Answer begin = run(conn_, "START TRANSACTION");
      if (!begin.ok) {
        run(conn_, "SELECT RELEASE_LOCK(" + literal_ + ")");
        throw_error(begin, "START TRANSACTION");
      }
    }
    return true;
  }

  std::optional<std::string> finish(bool fn_succeeded) override {
    if (!transaction_) return release();
    if (!fn_succeeded) {
      // A failed ROLLBACK leaves nothing to commit; only the lock's release needs confirming.
      run(conn_, "ROLLBACK");
      return release();
    }
    const Answer held = run(conn_, "SELECT IS_USED_LOCK(" + literal_ + ") = CONNECTION_ID()");
    if (!held.ok || held.value != "1") {
      run(conn_, "ROLLBACK");
      const std::string why =
          held.ok ? "this session no longer held the lock when fn returned (released behind the "
                    "helper's back?); fn's writes were rolled back instead of committed"
                  : describe_failure(held, "checking the lock before COMMIT");
      const auto released = release();
      return released ? why + "; " + *released : why;
    }
    const Answer commit = run(conn_, "COMMIT");
    const auto released = release();
    if (!commit.ok) {
      if (released) return *released + "; COMMIT also failed: " + commit.message;
      throw DatabaseError(kMariaDb, commit.sqlstate,
                          "MariaDB/MySQL: COMMIT failed, fn's writes were rolled back (the lock "
                          "is released): " +
                              commit.message);
    }
    return released;
  }

 private:
  void check_no_transaction() const {
    unsigned int status = 0;
    if (mariadb_get_infov(conn_, MARIADB_CONNECTION_SERVER_STATUS, &status) == 0 &&
        (status & SERVER_STATUS_IN_TRANS) != 0) {
      throw InvalidArgumentError("INVALID_ARGUMENT",
                                 "MariaDB/MySQL connection is inside a transaction; "
                                 "transaction = true would commit it (commit first)");
    }
  }

  std::optional<std::string> release() {
    const Answer released = run(conn_, "SELECT RELEASE_LOCK(" + literal_ + ")");
    if (!released.ok) return describe_failure(released, "RELEASE_LOCK(" + literal_ + ")");
    if (released.value == "1") return std::nullopt;
    if (released.value == "0") {
      return "RELEASE_LOCK(" + literal_ + ") returned 0: another session holds the lock";
    }
    return "RELEASE_LOCK(" + literal_ +
           ") returned NULL: nobody held the lock (released behind "
           "the helper's back?)";
  }

  static std::string describe_failure(const Answer& failed, const std::string& what) {
    if (connection_lost(failed.error)) {
      return what + ": the connection was lost (" + failed.message +
             "); the server frees the lock when it notices the session ended";
    }
    return what + " failed: " + failed.message;
  }

  MYSQL* conn_;
  bool transaction_;
  std::string literal_;  // the escaped, quoted GET_LOCK name
};

}  // namespace

namespace detail {

void lock_mysql(MYSQL* conn, std::string_view name, const AdvisoryLockOptions& options,
                FunctionRef body) {
  check_arguments(name, options);
  MysqlAdvisoryLock database(conn, name, options.transaction);
  run_two_level(LocalLockTable::process_wide(), name, options, database, body);
}

}  // namespace detail
}  // namespace holdfast::sql
