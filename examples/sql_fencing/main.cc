// Fenced database writes: a lock holder that stalled past its lease must not overwrite the
// work of the holder that came after it.
//
//   sql_fencing POSTGRES_URL
//
// The story, in the order it runs:
//   1. Worker A is granted the Holdfast lock "job-7" with fencing token 41, then stalls (a long
//      GC pause, a swapped-out VM). Its lease runs out.
//   2. Worker B is granted the lock next, with token 42, and records its result with a fenced
//      write. The row now carries fence 42.
//   3. A wakes up, still believing it holds the lock, and writes with token 41. The database
//      refuses it, because 41 < 42, and A learns it lost the lock.
// Tokens come from Holdfast holds (the `token` field); here two constants stand for two
// successive grants. Exit code 0 only if A's stale write was refused and B's result survived.
#include <cstdlib>
#include <iostream>

#include "holdfast/sql/advisory_lock.h"
#include "holdfast/sql/fencing.h"

namespace {

using holdfast::sql::FencedUpdate;
using holdfast::sql::FenceOutcome;

FencedUpdate record_result(const char* status) {
  return {.schema = std::nullopt,
          .table = "jobs",
          .key_column = "id",
          .key_value = "job-7",
          .fence_column = "fence",
          .set = {{"status", status}}};
}

std::string query_one(PGconn* conn, const char* sql) {
  PGresult* r = PQexec(conn, sql);
  std::string value = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
                          ? PQgetvalue(r, 0, 0)
                          : std::string("<error: ") + PQresultErrorMessage(r) + ">";
  PQclear(r);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sql_fencing POSTGRES_URL\n";
    return 2;
  }
  try {
    holdfast::sql::PgConnection db(argv[1]);
    PQclear(PQexec(db.get(),
                   "SET client_min_messages = warning; DROP TABLE IF EXISTS jobs;"
                   "CREATE TABLE jobs (id text PRIMARY KEY, status text, fence bigint);"
                   "INSERT INTO jobs VALUES ('job-7', 'pending', NULL)"));

    const std::uint64_t token_a = 41;  // A's grant; A then stalls past its lease
    const std::uint64_t token_b = 42;  // B's grant, after A's lease expired

    // B writes inside a database advisory lock too: the two compose (the advisory lock keeps
    // B's own processes apart; the fence stops anyone holding an older token).
    const auto by_b = holdfast::sql::with_advisory_lock(
        db, "job-7",
        [&] { return holdfast::sql::fenced_update(db.get(), record_result("done by B"), token_b); },
        {.timeout = std::chrono::seconds(5), .transaction = true});
    std::cout << "B (token " << token_b << "): " << (by_b.applied() ? "applied" : "refused")
              << "\n";

    const auto by_a = holdfast::sql::fenced_update(db.get(), record_result("done by A"), token_a);
    std::cout << "A (token " << token_a
              << ", stale): " << (by_a.outcome == FenceOutcome::kStale ? "refused" : "NOT refused")
              << ", row fence is " << by_a.current_fence.value_or(-1) << "\n";

    const std::string status = query_one(db.get(), "SELECT status FROM jobs WHERE id = 'job-7'");
    std::cout << "row status: " << status << "\n";
    const bool ok = by_b.applied() && by_a.outcome == FenceOutcome::kStale &&
                    by_a.current_fence == 42 && status == "done by B";
    std::cout << (ok ? "OK: the stale holder's write was refused\n"
                     : "FAILED: the stale write was not refused\n");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::cerr << "sql_fencing: " << e.what() << "\n";
    return EXIT_FAILURE;
  }
}
