// What a node checks of the database's replication, at start and on every sweep (and after a
// change of primary): whether a commit it is answered for is on a synchronous standby, so a
// failover to that standby keeps it (docs/scale-out.md, "When PostgreSQL fails over").
//
// The node reads, in its own session (what applies to its own commits):
//  - synchronous_commit: `off` and `local` do not wait for any standby;
//  - synchronous_standby_names: empty means no commit waits for a standby;
//  - pg_stat_replication: how many standbys are connected in the `sync` or `quorum` state
//    (its details are visible only to roles with pg_monitor or pg_read_all_stats; without
//    them the count is unknown, -1).
// Commits wait for a synchronous standby exactly when the first two say so; that is what
// `synchronous` means here. A synchronous set-up with no synchronous standby connected is
// still safe (commits wait, then time out on the node's deadline) and is reported as such.
// A node with requireSyncReplication refuses to start without it and, while it is missing
// later, refuses every write with STORE_UNAVAILABLE; otherwise it warns (log, /readyz, INFO,
// the holdfast_store_sync_replication metric) and serves.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

struct Replication {
  bool synchronous = false;
  std::string synchronous_commit;
  std::string standby_names;
  std::int64_t sync_standbys = -1;  // connected in sync or quorum state; -1: not visible
  // Why commits are not safe across a failover (empty when synchronous), or, when they are,
  // what is still worth knowing (no synchronous standby connected, state not visible).
  std::string warning;
};

// The statement, prepared on the pool (a read).
Statement replication_statement();
Result<Replication> read_replication(PgPool& pool);

}  // namespace holdfast::pg
