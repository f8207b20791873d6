// ValueRows: typed values on a node over PostgreSQL (schema version 9, schema_values.cc).
//
// A key's value is one row of holdfast_values: its type, its expiry (judged by the database
// clock, as leases are) and its elements in one bytea, encoded as the write-ahead log encodes a
// value's body. A command reads the row, runs the same operation the embedded store runs
// (core/values/value_ops.h) on the decoded value, and writes the row back:
//  1. a read outside a transaction: holdfast_key_open(k, false), one statement;
//  2. a write, and every command inside a transaction (a script, MULTI/EXEC): the row is read
//     with the key's claim taken first (holdfast_key_open(k, true)), then written back
//     (put()), in one database transaction; the claim, an advisory lock held to the commit,
//     keeps every other node's commands on that key out until then, so a script's read and
//     the write it bases on it are atomic across nodes, as in Redis;
//  3. a lock grant never makes a lock row on a key holding a value, and a value is never made
//     on a key in use by a lock: both take the claim, then look at the other table (the grant
//     through a trigger, which answers SQLSTATE HF001: WRONGTYPE).
// Writing a whole value back costs O(its elements) per command; values are small (at most
// kMaxValueElements elements of kMaxElementBytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/values/value.h"
#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

// A key as holdfast_key_open finds it.
struct KeyRow {
  Millis db_now = 0;
  bool lock_in_use = false;  // a lock row that is live or keeps the key closed (lock-delay)
  bool lock_held = false;
  std::optional<std::string> lock_owner;  // a single hold's value (GET); none for a group
  std::int64_t lock_mode = 0;             // 0 a single hold, else a shared or semaphore group
  Millis lock_lease_end = kNever;
  ValueCell value;  // the live value, if any
};

class ValueRows {
 public:
  explicit ValueRows(PgPool& pool) : pool_(pool) {}
  static std::vector<Statement> statements();

  // `claim`: take the key's claim first (REQUIRES: inside a transaction).
  Result<KeyRow> open(std::string_view key, bool claim);
  // Writes the cell back as the key's value (an empty cell deletes it). REQUIRES: the claim,
  // in the same transaction.
  Status put(std::string_view key, const ValueCell& cell);
  // The value's expiry only. REQUIRES: the claim.
  Status set_expiry(std::string_view key, Millis expires_at);
  // DEL: whether a live value went. Takes the claim itself.
  Result<bool> remove(std::string_view key);
  // Live values in the database (all nodes'), and the sweep of expired rows.
  Result<std::int64_t> count_live();
  Status sweep_expired();

 private:
  PgPool& pool_;
};

}  // namespace holdfast::pg
