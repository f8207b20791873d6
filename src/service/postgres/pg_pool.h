// PgPool: a small, fixed set of connections to the primary (pg_primary.h) shared by every
// thread of a node, with the node's statements prepared on each.
//
// 1. open() connects every slot, runs the session set-up and prepares every statement, so an
//    unreachable database or a statement that does not compile stops the node at start, not
//    at its first request.
// 2. run(name, params) waits for a free slot (FIFO enough: a condition variable), runs the
//    prepared statement within the deadline, and gives the slot back. A statement holds a
//    slot only for its own round trip; nobody waits for a lock while holding a connection.
// 3. A slot's connection is replaced before its next use when it broke, when the server
//    closed it while idle (a restart says goodbye), or when it belongs to an older epoch of
//    the primary. A statement whose failure points at the server (no answer by the deadline,
//    a broken connection, a read-only server) tells the Primary, which moves the epoch on:
//    every other connection is then replaced too, and statements still waiting on them are
//    abandoned, so a failover costs one detection. If reconnecting fails the call answers
//    UNAVAILABLE and the slot stays empty for the next try.
// 4. A statement that failed after it was sent is NOT retried: it may have committed. Its
//    error is STORE_UNAVAILABLE with outcome=unknown (pg_conn.h) when the statement writes;
//    a read that failed is just UNAVAILABLE.
// 5. A gate (set_write_gate) may refuse every statement that writes before it is sent, e.g.
//    while the database does not replicate synchronously and the node must not write.
// 6. begin() lends one connection to the calling thread for a database transaction: until the
//    Transaction ends, every run() on that thread goes to it, inside BEGIN ... COMMIT.
// The connection class answers every round trip within a Deadline the same way, so a writer
// that sends many statements in one round trip (a pipeline) keeps these rules.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "service/postgres/pg_conn.h"
#include "service/postgres/pg_primary.h"

namespace holdfast::pg {

struct Statement {
  std::string name;
  std::string sql;
  bool writes = true;  // false for statements that only read (their failures change nothing)
};
// A statement that only reads.
inline Statement reading(std::string name, std::string sql) {
  return Statement{std::move(name), std::move(sql), false};
}

class PgPool {
 public:
  // `session_setup` runs on every new connection first (e.g. SET statement_timeout = ...).
  // While opening, each round trip may take up to `open_round_trip_ms` (at least the
  // primary's deadline): nothing is served yet, and a database slow for a moment (a busy
  // machine, a lock on a table) must not stop a node from starting. Connections made later
  // have the deadline.
  static Result<std::unique_ptr<PgPool>> open(Primary& primary, std::size_t size,
                                              std::string session_setup,
                                              std::vector<Statement> statements,
                                              Millis open_round_trip_ms = 0);
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  Result<Rows> run(const std::string& name, const Params& params);

  // Several prepared statements that write, sent in ONE round trip and run as ONE implicit
  // transaction (so one commit, one WAL flush): `EXECUTE name(literals); ...` in a simple
  // query. The outer error is as run()'s for the round trip as a whole (refused by the gate
  // or no connection: nothing ran; outcome unknown: it may have committed, every statement
  // of it). Otherwise each statement's result in order; they end early or with one that did
  // not succeed when a statement failed (or a parameter could not be quoted), and then the
  // whole transaction rolled back: nothing of it took effect. pg_batch.h uses it.
  struct Call {
    const std::string* name;
    const Params* params;
  };
  Result<std::vector<Rows>> run_batch(const std::vector<Call>& calls);

  // Called before each statement that writes; an error refuses it unsent.
  void set_write_gate(std::function<std::optional<Error>()> gate);

  // A database transaction on one connection, for the thread that began it. commit() ends it;
  // destroyed without a commit, it rolls back.
  class Transaction {
   public:
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    Status commit();

   private:
    friend class PgPool;
    Transaction(PgPool& pool, std::size_t slot, std::unique_ptr<PgConn> conn);
    void end(const char* sql);

    PgPool& pool_;
    std::size_t slot_;
    std::unique_ptr<PgConn> conn_;
  };
  // Takes a connection (waiting for a free one) and sends BEGIN. REQUIRES: the calling thread
  // has no transaction of this pool open.
  Result<std::unique_ptr<Transaction>> begin();

  // True while the calling thread has a transaction of this pool open.
  bool in_transaction() const;
  // True when `pid` is the backend of one of this pool's connections (notifications this node
  // sent itself are recognised by it).
  bool is_own_backend(int pid) const;
  std::uint64_t statements_run() const;
  Primary& primary() { return primary_; }

 private:
  PgPool(Primary& primary, std::string session_setup, std::vector<Statement> statements);
  // A connection with the session set up and every statement prepared; each round trip waits
  // up to `round_trip_ms`, or the primary's deadline when that is longer.
  Result<std::unique_ptr<PgConn>> connect_slot(Millis round_trip_ms = 0);
  std::size_t take();
  // A slot's connection, replaced if it is not fit for use (point 3); an error (and the slot
  // given back) when that fails.
  Result<std::unique_ptr<PgConn>> lend(std::size_t slot);
  void give_back(std::size_t slot, std::unique_ptr<PgConn> conn);
  // Runs `name` on `conn` and applies points 3 and 4 to the outcome.
  Result<Rows> run_on(PgConn& conn, const std::string& name, const Params& params);
  // After a failure on `conn`: tells the primary when the failure points at it.
  void after_failure(PgConn& conn, const Error& error);
  const Statement* find(const std::string& name) const;

  Primary& primary_;
  const std::string session_setup_;
  const std::vector<Statement> statements_;
  std::function<std::optional<Error>()> gate_;
  mutable std::mutex mu_;
  std::condition_variable free_cv_;
  std::vector<std::unique_ptr<PgConn>> conns_;  // null while lent out or broken
  std::vector<bool> lent_;
  std::vector<int> pids_;  // backend pid per slot, 0 when none
  std::uint64_t statements_run_ = 0;
};

}  // namespace holdfast::pg
