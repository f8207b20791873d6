// The failover backend of the torture program: three nodes over a PostgreSQL primary and its
// synchronous standby (support/postgres_pair.h), reached either through libpq's multi-host
// URL or through one address behind a proxy that follows the primary and closes the old
// sessions (support/tcp_proxy.h). The contended load runs on every node, keepers hold session
// holds and long leases on every node for the whole run (keepers.h), and the failovers an HA
// agent meets come one after another, each kind at least once:
//  - primary-frozen: every process of the primary stops (SIGSTOP); 1.5 s later the standby is
//    promoted; 2 s after that the old primary resumes, a second primary on the old timeline.
//    For 2 s more no node may open a connection to it or run a statement on it (its
//    pg_stat_activity tells), then it is rebuilt.
//  - primary-stop: pg_ctl stop -m immediate; the standby is promoted 0.5 s later.
//  - primary-kill9: every process of the primary is killed; the standby is promoted only after
//    the session grace and 2 s more: the database is away for longer than the grace.
// After each promotion the proxy (if any) sends new connections to the new primary and closes
// the old ones, and the old primary is rebuilt as the new primary's synchronous standby.
// Checked, beside the load's checks (tokens, overlap, fence): every node grants again within
// promotion_bound_ms of each promotion, every key within the lease plus bound_ms, no keeper
// loses its hold, the resumed old primary is never used, and every node stops cleanly.
#pragma once

#include <ostream>

#include "torture/torture_run.h"

namespace holdfast::torture {

Outcome run_failover(const TortureOptions& options, std::ostream& out);

}  // namespace holdfast::torture
