// Fenced single-row UPDATE for PostgreSQL; the idea is described in holdfast/sql/fencing.h.
//
// Statement (identifiers quoted by libpq, every value a text parameter):
//   UPDATE "s"."t" SET "c1" = $1, ..., "fence" = $n
//   WHERE "key" = $n+1 AND ("fence" IS NULL OR "fence" < $n)
//   RETURNING "fence"
// One returned row means applied. No row: a second SELECT of the row's fence tells a stale
// token (the row exists) from a missing row. That SELECT only classifies the refusal; the
// refusal itself was decided atomically by the UPDATE.
#include "holdfast/sql/fencing.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "holdfast/errors.h"
#include "holdfast/sql/advisory_lock.h"
#include "pg_query.h"

namespace holdfast::sql {
namespace {

std::string quote_identifier(PGconn* conn, const std::string& name) {
  if (name.empty()) throw InvalidArgumentError("INVALID_ARGUMENT", "empty SQL identifier");
  char* quoted = PQescapeIdentifier(conn, name.data(), name.size());
  if (quoted == nullptr) {
    throw InvalidArgumentError("INVALID_ARGUMENT", "cannot quote identifier '" + name +
                                                       "': " + pg_error_message(conn, nullptr));
  }
  std::string result(quoted);
  PQfreemem(quoted);
  return result;
}

void check(const FencedUpdate& update, std::uint64_t token) {
  if (token > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw InvalidArgumentError("INVALID_ARGUMENT", "fencing token " + std::to_string(token) +
                                                       " does not fit a bigint fence column");
  }
  std::set<std::string> seen{update.fence_column};
  for (const ColumnValue& c : update.set) {
    if (!seen.insert(c.column).second) {
      throw InvalidArgumentError("INVALID_ARGUMENT", "fenced_update sets column '" + c.column +
                                                         "' twice or sets the fence column itself");
    }
  }
}

}  // namespace

FencedWriteResult fenced_update(PGconn* conn, const FencedUpdate& update, std::uint64_t token) {
  check(update, token);
  const std::string table =
      (update.schema ? quote_identifier(conn, *update.schema) + "." : std::string()) +
      quote_identifier(conn, update.table);
  const std::string fence = quote_identifier(conn, update.fence_column);
  const std::string key = quote_identifier(conn, update.key_column);

  std::vector<std::optional<std::string>> params;
  std::string assignments;
  for (const ColumnValue& c : update.set) {
    params.push_back(c.value);
    assignments += quote_identifier(conn, c.column) + " = $" + std::to_string(params.size()) + ", ";
  }
  params.push_back(std::to_string(token));
  const std::string token_param = "$" + std::to_string(params.size());
  params.push_back(update.key_value);
  const std::string key_param = "$" + std::to_string(params.size());

  // The token is compared as bigint explicitly, so PostgreSQL never guesses its type.
  const std::string sql = "UPDATE " + table + " SET " + assignments + fence + " = " + token_param +
                          "::bigint WHERE " + key + " = " + key_param + " AND (" + fence +
                          " IS NULL OR " + fence + " < " + token_param + "::bigint) RETURNING " +
                          fence;
  PgResult updated = pg_exec(conn, sql, params);
  if (!pg_succeeded(updated.get())) throw_pg_error(conn, updated.get(), "fenced UPDATE");
  if (PQntuples(updated.get()) == 1) {
    return {FenceOutcome::kApplied, static_cast<std::int64_t>(token)};
  }

  PgResult current = pg_exec(conn, "SELECT " + fence + " FROM " + table + " WHERE " + key + " = $1",
                             {update.key_value});
  if (!pg_succeeded(current.get())) throw_pg_error(conn, current.get(), "reading the fence");
  if (PQntuples(current.get()) == 0) return {FenceOutcome::kNoRow, std::nullopt};
  const auto value = pg_single_value(current.get());
  return {FenceOutcome::kStale,
          value ? std::optional<std::int64_t>(std::stoll(*value)) : std::nullopt};
}

}  // namespace holdfast::sql
