#include "service/postgres/pg_conn.h"

#include <poll.h>

#include <charconv>

namespace holdfast::pg {

Params& Params::text(std::string_view value) {
  values_.emplace_back(std::string(value));
  return *this;
}

Params& Params::maybe_text(const std::optional<std::string_view>& value) {
  return value ? text(*value) : null();
}

Params& Params::number(std::int64_t value) {
  values_.emplace_back(std::to_string(value));
  return *this;
}

Params& Params::maybe_number(const std::optional<std::int64_t>& value) {
  return value ? number(*value) : null();
}

Params& Params::null() {
  values_.emplace_back(std::nullopt);
  return *this;
}

std::vector<const char*> Params::pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

std::string_view Rows::text(int row, int col) const {
  const char* v = PQgetvalue(result_.get(), row, col);
  return std::string_view(v, static_cast<std::size_t>(PQgetlength(result_.get(), row, col)));
}

std::int64_t Rows::number(int row, int col) const { return maybe_number(row, col).value_or(0); }

std::optional<std::int64_t> Rows::maybe_number(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  std::string_view t = text(row, col);
  std::int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

std::int64_t Rows::affected() const {
  if (!result_) return 0;
  std::string_view t = PQcmdTuples(result_.get());
  std::int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

std::optional<std::string> Rows::maybe_text(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  return std::string(text(row, col));
}

Result<std::unique_ptr<PgConn>> PgConn::connect(const std::string& url) {
  // Later keywords override earlier ones, so the URL (expanded from dbname) wins over these.
  const char* keys[] = {"connect_timeout",
                        "application_name",
                        "keepalives",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "client_encoding",
                        "dbname",
                        nullptr};
  const char* values[] = {"5", "holdfast", "1", "10", "5", "3", "UTF8", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr)
    return Error(ErrorCode::kUnavailable, "cannot connect to PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    return Error(ErrorCode::kUnavailable,
                 "cannot connect to PostgreSQL at " + redact_url(url) + ": " + message);
  }
  // Notices (e.g. "relation already exists, skipping") are not errors; keep them off stderr.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgConn>(new PgConn(conn));
}

PgConn::~PgConn() { PQfinish(conn_); }

Result<Rows> PgConn::finish(PGresult* result, std::string_view what) {
  Rows rows(result);
  const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) return rows;
  // The schema raises HF001 when a lock would be made on a key holding a typed value
  // (schema_values.cc): the keyspace's WRONGTYPE, not a failure of the database.
  if (const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
      state != nullptr && std::string_view(state) == kWrongTypeSqlState)
    return Error(ErrorCode::kWrongType, "Operation against a key holding the wrong kind of value");
  std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(conn_);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (message.empty()) message = "no result";
  return Error(ErrorCode::kUnavailable, "PostgreSQL: " + std::string(what) + ": " + message);
}

bool PgConn::closed_by_server() {
  pollfd p{PQsocket(conn_), POLLIN, 0};
  if (p.fd < 0) return true;
  // An idle pooled connection has nothing to read unless the server said goodbye (a FATAL
  // "terminating connection", then EOF; libpq would report it only on the next statement).
  // Anything else unasked (a stray NOTICE) costs at most a reconnect.
  return ::poll(&p, 1, 0) != 0;
}

Status PgConn::prepare(const std::string& name, const std::string& sql) {
  auto r = finish(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr), "prepare " + name);
  if (!r.ok()) return std::move(r).error();
  return ok_status();
}

Result<Rows> PgConn::run(const std::string& name, const Params& params) {
  auto ptrs = params.pointers();
  return finish(
      PQexecPrepared(conn_, name.c_str(), params.size(), ptrs.data(), nullptr, nullptr, 0), name);
}

Result<Rows> PgConn::exec(const std::string& sql) {
  return finish(PQexec(conn_, sql.c_str()), "statement");
}

Result<Rows> PgConn::exec(const std::string& sql, const Params& params) {
  auto ptrs = params.pointers();
  return finish(
      PQexecParams(conn_, sql.c_str(), params.size(), nullptr, ptrs.data(), nullptr, nullptr, 0),
      "statement");
}

std::string redact_url(std::string_view url) {
  // postgres://user:secret@host/db -> postgres://user:***@host/db
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url.substr(0, url.find("password")));
  auto at = url.find('@', scheme + 3);
  if (at == std::string_view::npos) return std::string(url);
  auto colon = url.find(':', scheme + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

}  // namespace holdfast::pg
