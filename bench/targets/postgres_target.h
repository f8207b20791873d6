// PostgreSQL advisory locks as a lock service: try-acquire = SELECT pg_try_advisory_lock($1),
// a blocking acquire = SELECT pg_advisory_lock($1) (the session waits in the server's queue,
// for at most the acquire's timeout as its lock_timeout), release = SELECT
// pg_advisory_unlock($1), all prepared statements on session-level locks named by a bigint. The
// server is a throw-away cluster made by scripts/start-postgres.sh.
#pragma once

#include <filesystem>
#include <memory>

#include "../target.h"

namespace holdfast::bench {

// `scripts_dir` holds start-postgres.sh (the project's scripts/ folder).
std::unique_ptr<Target> make_postgres_target(std::filesystem::path scripts_dir);

}  // namespace holdfast::bench
