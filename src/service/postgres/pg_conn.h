// One libpq connection with the few things the PostgreSQL store needs from it: connect, prepare
// named statements, run them with text parameters, and read rows, every round trip bounded by
// a deadline on this side.
//
// libpq is used non-blocking (PQsendQuery*, PQconsumeInput, PQisBusy, poll): a statement that
// has not answered by its Deadline is abandoned and its connection closed, never cancelled.
// A cancelled write can still commit, and PostgreSQL reports a commit whose wait for the
// synchronous standby was cancelled as done, with only a WARNING; so neither is ever taken as
// done. Every call answers with a Result:
//  - UNAVAILABLE: nothing took effect (no connection, the statement was never sent, or the
//    database answered with an error, which rolled the statement back);
//  - STORE_UNAVAILABLE with outcome=unknown: the statement was sent and may have committed
//    (no answer by the deadline, the connection broke, or the commit came with the warning
//    that it may not have been replicated). Only the database can tell what happened.
// After a failure primary_suspect() says whether it points at the server rather than at the
// statement (a deadline, a broken connection, a server that turned read-only): the pool then
// reconnects every connection, not just this one (pg_pool.h).
//
// The warning test: PostgreSQL sends "canceling wait for synchronous replication due to user
// request" (SQLSTATE 01000) or "canceling the wait for synchronous replication and terminating
// connection due to administrator command" (57P01), each with the detail "The transaction has
// already committed locally, but might not have been replicated to the standby.", when
// anything cancels a commit waiting for the standby (pg_cancel_backend, statement_timeout,
// a pooler, a shutdown). The message text follows the server's lc_messages, which only a
// superuser may change, so the test is on what is never translated: a notice of severity
// WARNING with one of those two SQLSTATEs during a statement makes its outcome unknown. None
// of Holdfast's own statements raises such a warning otherwise.
//
// Not thread-safe: one thread uses a PgConn at a time (the pool hands it out).
#pragma once

#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"

namespace holdfast::pg {

// The SQLSTATE the schema raises for a lock on a key that holds a typed value; run() answers it
// as WRONGTYPE (ErrorCode::kWrongType) rather than UNAVAILABLE.
inline constexpr std::string_view kWrongTypeSqlState = "HF001";

// Appends one element of a PostgreSQL array's text form (NULL for none): {"a",NULL,"b\\"c"}.
void append_array_element(std::string& out, const std::optional<std::string>& value);

// Text-format parameters for one statement, $1 first. Values are copied, so the caller's
// strings may go away before the statement runs.
class Params {
 public:
  Params& text(std::string_view value);
  Params& maybe_text(const std::optional<std::string_view>& value);  // NULL when none
  Params& number(std::int64_t value);
  Params& maybe_number(const std::optional<std::int64_t>& value);  // NULL when none
  Params& null();
  // A text[] parameter: {"a","b"}.
  Params& text_array(const std::vector<std::string>& values);

  int size() const { return static_cast<int>(values_.size()); }
  const std::vector<std::optional<std::string>>& values() const { return values_; }
  // Pointers for PQsendQueryPrepared: NUL-terminated texts, nullptr for NULL. Valid until the
  // next change to this object.
  std::vector<const char*> pointers() const;

 private:
  std::vector<std::optional<std::string>> values_;
};

// The rows of one result (text format). Accessors take (row, column), both from 0.
class Rows {
 public:
  Rows() = default;
  explicit Rows(PGresult* result) : result_(result) {}

  int size() const { return result_ ? PQntuples(result_.get()) : 0; }
  bool empty() const { return size() == 0; }
  bool is_null(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  std::string_view text(int row, int col) const;
  std::int64_t number(int row, int col) const;  // 0 when NULL
  std::optional<std::int64_t> maybe_number(int row, int col) const;
  std::optional<std::string> maybe_text(int row, int col) const;
  bool boolean(int row, int col) const { return text(row, col) == "t"; }
  // The statement succeeded (rows or a command), rather than failed.
  bool succeeded() const;
  const PGresult* raw() const { return result_.get(); }
  // Rows an INSERT/UPDATE/DELETE without RETURNING touched.
  std::int64_t affected() const;
  // A result of its own with columns [first, first + count) of `row`, or of no row: one
  // caller's share of a set statement's answer (pg_batch.h). On a failure to allocate, a
  // result that did not succeed.
  Rows part(std::optional<int> row, int first, int count) const;

 private:
  struct Clear {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
  };
  std::unique_ptr<PGresult, Clear> result_;
};

// When a round trip must have answered, and what ends the wait sooner: the primary's epoch
// moving on (pg_primary.h: the connection's server is no longer the primary).
struct Deadline {
  std::chrono::steady_clock::time_point at;
  const std::atomic<std::uint64_t>* epoch = nullptr;
  std::uint64_t epoch_seen = 0;

  static Deadline in(Millis ms) {
    return Deadline{std::chrono::steady_clock::now() + std::chrono::milliseconds(ms)};
  }
  bool aborted() const { return epoch != nullptr && epoch->load() != epoch_seen; }
};

// Where to connect: libpq keywords and their values (expand_dbname off), and a name for
// messages (host:port).
struct ConnParams {
  std::vector<std::pair<std::string, std::string>> settings;
  std::string label;
};

// What a connection found about its server (Primary::verify runs the query).
struct ServerRole {
  bool in_recovery = false;
  bool read_only = false;
  std::int64_t timeline = 0;  // the timeline a primary writes on; 0 on a standby
};

// A statement whose outcome is unknown (see the top of this file): STORE_UNAVAILABLE with
// outcome=unknown.
Error unknown_outcome(std::string message);
bool is_unknown_outcome(const Error& e);

class PgConn {
 public:
  // Connects to `params` within the deadline. Defaults that the parameters may override:
  // application_name=holdfast, client_encoding=UTF8 (keys are UTF-8), TCP keepalives.
  static Result<std::unique_ptr<PgConn>> connect(const ConnParams& params, const Deadline& by);
  // Connects to a postgres:// URL or key=value string as libpq reads it (every host of a
  // multi-host URL in turn); each later round trip without a deadline of its own gets
  // `timeout_ms`. For start-up work (migrations) and tests.
  static Result<std::unique_ptr<PgConn>> connect(const std::string& url, Millis timeout_ms);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  Status prepare(const std::string& name, const std::string& sql, const Deadline& by);
  // Runs a prepared statement. Rows for SELECT/RETURNING, empty Rows for commands.
  Result<Rows> run(const std::string& name, const Params& params, const Deadline& by);
  // Runs one or more statements given as text, without parameters (the rows of the last).
  Result<Rows> exec(const std::string& sql, const Deadline& by);
  // Runs a statement given as text with parameters (rare statements: migrations, start-up).
  Result<Rows> exec(const std::string& sql, const Params& params, const Deadline& by);
  // Runs several statements given as one text (the simple query protocol: one round trip, and
  // one implicit transaction unless the text says otherwise). The outer error is as run()'s
  // for the round trip (not sent, lost, no answer, a commit that may not be replicated);
  // otherwise every statement's result in order, which end at the first that failed (the
  // server skips the rest, and the implicit transaction rolled back). failed() turns one
  // result into its error as run() answers it.
  Result<std::vector<Rows>> exec_each(const std::string& sql, const Deadline& by);
  Error failed(const Rows& result, std::string_view what);
  // `value` as an SQL literal for this connection (quotes and escapes); none when libpq
  // refuses it (invalid in the client encoding).
  std::optional<std::string> literal(std::string_view value);
  // The same with the connection's own timeout (connect(url, timeout_ms)).
  Result<Rows> exec(const std::string& sql) { return exec(sql, Deadline::in(timeout_ms_)); }
  Result<Rows> exec(const std::string& sql, const Params& params) {
    return exec(sql, params, Deadline::in(timeout_ms_));
  }

  // False once the connection broke or was closed after a deadline: replace it.
  bool broken() const { return conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK; }
  // After a failure: it says more about the server than about the statement (no answer in
  // time, a broken connection, or a server that no longer takes writes: SQLSTATE 25006).
  bool primary_suspect() const { return primary_suspect_; }
  // For an idle connection: true when the server has sent something since (a restart or a
  // failover sends a FATAL and closes), noticed without a round trip: do not use it. A
  // connection dropped without a word (a network cut) still looks alive until it is used.
  bool closed_by_server();
  int backend_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }
  PGconn* raw() { return conn_; }
  const std::string& label() const { return label_; }
  void set_default_timeout(Millis ms) { timeout_ms_ = ms; }
  // The primary's epoch this connection was opened in (pg_pool.h); set by its owner.
  std::uint64_t epoch = 0;

 private:
  PgConn(PGconn* conn, std::string label, Millis timeout_ms);
  static Result<std::unique_ptr<PgConn>> finish_connect(PGconn* conn, std::string label,
                                                        const Deadline& by, Millis timeout_ms);
  // Sends nothing; waits for the statement just sent and collects its results (await: the
  // first error, else the last result).
  Result<std::vector<Rows>> collect(bool sent, std::string_view what, const Deadline& by);
  Result<Rows> await(bool sent, std::string_view what, const Deadline& by);
  // Polls the socket for `events` until the deadline; false when it passed or was aborted.
  bool wait_for(short events, const Deadline& by);
  // Closes the connection after a deadline or a loss, so nothing more is read from it.
  void close();
  static void on_notice(void* self, const PGresult* notice);

  PGconn* conn_;
  std::string label_;
  Millis timeout_ms_;
  bool primary_suspect_ = false;
  // Set by on_notice while a statement runs: its commit may not be on the standby.
  std::optional<std::string> replication_warning_;
};

// The URL without its password, for messages and logs.
std::string redact_url(std::string_view url);

}  // namespace holdfast::pg
