// Faults on the server process and its connections: kill -9 and a restart, SIGSTOP past the
// leases, clients that vanish, and a restart of the PostgreSQL under a node.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "support/postgres.h"
#include "support/server_process.h"
#include "torture/fault_kind.h"
#include "torture/history.h"

namespace holdfast::torture {

// kill -9 at once, a random moment of down time (up to 200 ms), then the same command again.
FaultResult kill9_and_restart(testing::ServerProcess& server, std::mt19937& rng);

// SIGSTOP for `stopped_ms`, then SIGCONT.
FaultResult stop_and_continue(testing::ServerProcess& server, std::int64_t stopped_ms);

// Three clients vanish on `key`: one resets its connection halfway through an acquire, one
// resets it right after sending a whole acquire (it may have been granted), and one is granted
// the key and closes without releasing it (its hold is recorded, and returned as `abandoned`:
// the key stays held until its lease ends).
FaultResult vanish_clients(int port, const std::string& key, std::int64_t ttl_ms, History& history);

// A fast shutdown of the database (its connections break) and a start on the same data.
FaultResult restart_database(testing::TestPostgres& postgres);

}  // namespace holdfast::torture
