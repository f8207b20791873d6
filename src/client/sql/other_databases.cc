// The databases without a usable advisory lock: SQLite (a documented no-op that still runs fn,
// because SQLite's file locking already serializes writers and it has no named locks) and
// everything else (UnsupportedDatabase, so a missing lock is never silently assumed).
#include "holdfast/sql/advisory_lock.h"
#include "two_level.h"

namespace holdfast::sql::detail {

void lock_sqlite(std::string_view name, const AdvisoryLockOptions& options, FunctionRef body) {
  check_arguments(name, options);
  if (options.transaction) {
    throw UnsupportedDatabase("SQLite",
                              "advisory lock '" + std::string(name) +
                                  "': transaction = true is not supported on SQLite (the helper "
                                  "has no SQLite transaction to open); use SQLite's own BEGIN "
                                  "IMMEDIATE inside fn");
  }
  body();
}

void throw_unsupported(const OtherDatabase& database) {
  throw UnsupportedDatabase(database.product,
                            "advisory locks are not supported on " + database.product +
                                " (supported: PostgreSQL, MariaDB/MySQL; SQLite is a no-op)");
}

}  // namespace holdfast::sql::detail
