// One libpq connection with the few things the PostgreSQL store needs from it: connect with
// sane defaults, prepare named statements, run them with text parameters, and read rows.
//
// Every call answers with a Result; a failure is UNAVAILABLE carrying the database's message.
// A failure that broke the connection (the server went away, a failover, a network drop)
// leaves broken() true, so the pool replaces the connection before its next use.
//
// Not thread-safe: one thread uses a PgConn at a time (the pool hands it out).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace holdfast::pg {

// The SQLSTATE the schema raises for a lock on a key that holds a typed value; run() answers it
// as WRONGTYPE (ErrorCode::kWrongType) rather than UNAVAILABLE.
inline constexpr std::string_view kWrongTypeSqlState = "HF001";

// Text-format parameters for one statement, $1 first. Values are copied, so the caller's
// strings may go away before the statement runs.
class Params {
 public:
  Params& text(std::string_view value);
  Params& maybe_text(const std::optional<std::string_view>& value);  // NULL when none
  Params& number(std::int64_t value);
  Params& maybe_number(const std::optional<std::int64_t>& value);  // NULL when none
  Params& null();

  int size() const { return static_cast<int>(values_.size()); }
  // Pointers for PQexecPrepared: NUL-terminated texts, nullptr for NULL. Valid until the next
  // change to this object.
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
  // Rows an INSERT/UPDATE/DELETE without RETURNING touched.
  std::int64_t affected() const;

 private:
  struct Clear {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
  };
  std::unique_ptr<PGresult, Clear> result_;
};

class PgConn {
 public:
  // Connects to `url` (a postgres:// URL or a key=value connection string). Defaults that the
  // URL may override: connect_timeout=5, application_name=holdfast, client_encoding=UTF8 (keys
  // are UTF-8), TCP keepalives that notice a dead peer within about half a minute.
  static Result<std::unique_ptr<PgConn>> connect(const std::string& url);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  Status prepare(const std::string& name, const std::string& sql);
  // Runs a prepared statement. Rows for SELECT/RETURNING, empty Rows for commands.
  Result<Rows> run(const std::string& name, const Params& params);
  // Runs one or more statements given as text, without parameters.
  Result<Rows> exec(const std::string& sql);
  // Runs a statement given as text with parameters (rare statements: migrations, start-up).
  Result<Rows> exec(const std::string& sql, const Params& params);

  bool broken() const { return PQstatus(conn_) != CONNECTION_OK; }
  // For an idle connection: true when the server has sent something since (a restart or a
  // failover sends a FATAL and closes), noticed without a round trip: do not use it. A
  // connection dropped without a word (a network cut) still looks alive until it is used.
  bool closed_by_server();
  int backend_pid() const { return PQbackendPID(conn_); }
  PGconn* raw() { return conn_; }

 private:
  explicit PgConn(PGconn* conn) : conn_(conn) {}
  Result<Rows> finish(PGresult* result, std::string_view what);

  PGconn* conn_;
};

// The URL without its password, for messages and logs.
std::string redact_url(std::string_view url);

}  // namespace holdfast::pg
