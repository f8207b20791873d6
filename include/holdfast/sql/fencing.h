// Fenced database writes: make a row refuse writes from a lock holder whose lock has already
// passed to someone else.
//
// A lock alone cannot stop a holder that paused (GC, swap, a slow network) past its lease and
// then writes anyway. Holdfast hands every holder a fencing token that grows with each grant;
// the row keeps the highest token that wrote it, and a write carrying a smaller or equal token
// is refused by the database itself:
//
//   UPDATE t SET col = $v, fence = $token WHERE id = $id AND (fence IS NULL OR fence < $token)
//
// The fence column must be a bigint (NULL means "never fenced"). docs/sql-advisory-locks.md
// shows the same pattern for MariaDB/MySQL, and examples/sql_fencing runs it.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace holdfast::sql {

// One column assignment; value nullopt writes NULL. Values travel as text parameters, so
// PostgreSQL converts them to the column's type (no SQL is built from them).
struct ColumnValue {
  std::string column;
  std::optional<std::string> value;
};

// A guarded single-row update. Identifiers are quoted as given (case-sensitive, one identifier
// each; use `schema` for a schema-qualified table).
struct FencedUpdate {
  std::optional<std::string> schema;
  std::string table;
  std::string key_column;  // the row is WHERE key_column = key_value
  std::string key_value;
  std::string fence_column;      // bigint: the highest token that wrote the row, or NULL
  std::vector<ColumnValue> set;  // may be empty: then only the fence moves
};

enum class FenceOutcome {
  kApplied,  // the row was written and now carries the token
  kStale,    // refused: the row already carries this token or a newer one
  kNoRow,    // no row has that key; nothing was written
};

struct FencedWriteResult {
  FenceOutcome outcome;
  // The row's fence after the call: the token when applied, the newer fence when stale (nullopt
  // when there is no row).
  std::optional<std::int64_t> current_fence;

  bool applied() const noexcept { return outcome == FenceOutcome::kApplied; }
};

// Runs the guarded UPDATE on conn (inside whatever transaction conn is in) and says whether the
// database accepted it. kStale and kNoRow are answers, not errors.
// REQUIRES: token <= INT64_MAX (bigint), set has no duplicate column and not the fence column;
// violations throw holdfast::InvalidArgumentError. Database failures throw DatabaseError or
// holdfast::ConnectionError (see advisory_lock.h).
FencedWriteResult fenced_update(PGconn* conn, const FencedUpdate& update, std::uint64_t token);

}  // namespace holdfast::sql
