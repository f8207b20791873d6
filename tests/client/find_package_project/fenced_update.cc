// docs/client.md's fenced update (the as_holder example), as the page shows it, built against
// the installed holdfast::client and holdfast::sql: run.sh copies the page's code block into
// doc_example.inc, with this server's address where the page has 127.0.0.1:7420. Alice holds
// the turn, the example writes the board with the turn's token and hands the turn to bob; then
// a write with an older token is refused by the database. Each run starts afresh: a new table,
// and the turn bob may hold from a run before given up.
// Usage: fenced_update ALICE_TOKEN BOB_TOKEN HOST:PORT POSTGRES_URL
#include <holdfast/client.h>
#include <holdfast/sql/fencing.h>
#include <libpq-fe.h>

#include <cstdint>
#include <iostream>
#include <string>

namespace {

int failed(const std::string& what) {
  std::cerr << "fenced_update: " << what << "\n";
  return 1;
}

bool exec(PGconn* db, const char* sql) {
  PGresult* r = PQexec(db, sql);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  if (!ok) std::cerr << sql << ": " << PQerrorMessage(db);
  PQclear(r);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return failed("usage: fenced_update ALICE_TOKEN BOB_TOKEN HOST:PORT POSTGRES_URL");
  const std::string token = argv[1];
  const std::string address = argv[3];
  PGconn* db = PQconnectdb(argv[4]);
  if (PQstatus(db) != CONNECTION_OK) return failed(PQerrorMessage(db));
  holdfast::Client("holdfast://bob:" + std::string(argv[2]) + "@" + address)
      .unassign("game:42:turn");
  if (!exec(db, "DROP TABLE IF EXISTS games") ||
      !exec(db, "CREATE TABLE games (id text PRIMARY KEY, board text, fence bigint)") ||
      !exec(db, "INSERT INTO games VALUES ('42', '.........', NULL)"))
    return 1;
  holdfast::Client alice("holdfast://alice:" + token + "@" + address);
  const std::uint64_t turn = alice.assign("game:42:turn").token;
  const std::string board = "X........";
  const std::string other_player = "bob";
  {
#include "doc_example.inc"
  }
  const holdfast::HolderInfo after = alice.holder("game:42:turn");
  if (after.holder != other_player) return failed("the turn did not pass to bob");
  PGresult* row = PQexec(db, "SELECT board, fence FROM games WHERE id = '42'");
  const std::string written = PQgetvalue(row, 0, 0);
  const std::string fence = PQgetvalue(row, 0, 1);
  PQclear(row);
  if (written != board || fence != std::to_string(turn))
    return failed("the row is " + written + " with fence " + fence + ", not " + board +
                  " with the turn's token " + std::to_string(turn));
  // Alice's turn is over: a write with her token, or an older one, is refused.
  const auto stale = holdfast::sql::fenced_update(db,
                                                  {.table = "games",
                                                   .key_column = "id",
                                                   .key_value = "42",
                                                   .fence_column = "fence",
                                                   .set = {{"board", std::string("O........")}}},
                                                  turn);
  if (stale.applied()) return failed("a write with a spent token was applied");
  PQfinish(db);
  std::cout << "fenced_update ok: board written with token " << turn << ", turn with "
            << *after.holder << ", a stale write refused\n";
  return 0;
}
