// Small libpq helpers shared by the PostgreSQL lock and the fenced write: owned results, text
// parameters, and one mapping from a failed result to the library's exceptions.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::sql {

inline constexpr char kPostgres[] = "PostgreSQL";

struct PgResultDeleter {
  void operator()(PGresult* result) const noexcept { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// Runs one statement, or several separated by ';' when params is empty (simple query
// protocol: they then run as one implicit transaction, and the last result is returned).
// Parameters are text; nullopt is NULL. Never returns null: an out-of-memory result is
// reported as PGRES_FATAL_ERROR through pg_succeeded().
PgResult pg_exec(PGconn* conn, const std::string& sql,
                 const std::vector<std::optional<std::string>>& params = {});

// PGRES_COMMAND_OK or PGRES_TUPLES_OK.
bool pg_succeeded(const PGresult* result);

// The SQLSTATE of a failed result ("" when none, e.g. the connection broke).
std::string pg_sqlstate(const PGresult* result);

// libpq's message for a failed result (or the connection's when the result has none), one line.
std::string pg_error_message(PGconn* conn, const PGresult* result);

// Throws ConnectionError when the connection is gone, else DatabaseError with the SQLSTATE;
// `what` says which step failed.
[[noreturn]] void throw_pg_error(PGconn* conn, const PGresult* result, std::string_view what);

// The single value of a one-row result, or nullopt for NULL. REQUIRES: a TUPLES_OK result.
std::optional<std::string> pg_single_value(const PGresult* result);

}  // namespace holdfast::sql
