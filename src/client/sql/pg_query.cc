// libpq helpers; see pg_query.h.
#include "pg_query.h"

#include "holdfast/errors.h"
#include "holdfast/sql/advisory_lock.h"

namespace holdfast::sql {

PgResult pg_exec(PGconn* conn, const std::string& sql,
                 const std::vector<std::optional<std::string>>& params) {
  if (params.empty()) return PgResult(PQexec(conn, sql.c_str()));
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return PgResult(PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, /*resultFormat=*/0));
}

bool pg_succeeded(const PGresult* result) {
  if (result == nullptr) return false;
  const ExecStatusType status = PQresultStatus(result);
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

std::string pg_sqlstate(const PGresult* result) {
  const char* state = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  return state == nullptr ? "" : state;
}

std::string pg_error_message(PGconn* conn, const PGresult* result) {
  const char* raw = result != nullptr ? PQresultErrorMessage(result) : "";
  std::string message = (raw != nullptr && *raw != '\0') ? raw : PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  return message.empty() ? "unknown libpq error" : message;
}

void throw_pg_error(PGconn* conn, const PGresult* result, std::string_view what) {
  const std::string message = std::string(what) + ": " + pg_error_message(conn, result);
  if (PQstatus(conn) != CONNECTION_OK) throw ConnectionError("PostgreSQL: " + message);
  throw DatabaseError(kPostgres, pg_sqlstate(result), "PostgreSQL: " + message);
}

std::optional<std::string> pg_single_value(const PGresult* result) {
  if (PQntuples(result) < 1 || PQnfields(result) < 1 || PQgetisnull(result, 0, 0)) {
    return std::nullopt;
  }
  return std::string(PQgetvalue(result, 0, 0));
}

}  // namespace holdfast::sql
