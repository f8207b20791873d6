// PgPool: a small, fixed set of connections to PostgreSQL shared by every thread of a node,
// with the node's statements prepared on each.
//
// 1. open() connects every slot, runs the session set-up and prepares every statement, so an
// unreachable database or
//    a statement that does not compile stops the node at start, not at its first request.
// 2. run(name, params) waits for a free slot (FIFO enough: a condition variable), runs the
//    prepared statement, and gives the slot back. A statement holds a slot only for its own
//    round trip; nobody waits for a lock while holding a connection.
// 3. A slot whose connection broke (database restart, failover, network) is reconnected
//    lazily by the next run() that takes it; an idle connection the server closed meanwhile
//    (a restart says goodbye) is noticed before it is used, so calls after a restart do not
//    fail on stale connections; if that fails the call answers UNAVAILABLE and
//    the slot stays empty for the next try. A statement that failed because the connection
//    broke is NOT retried: it may have committed, and only the caller knows whether running
//    it twice is harmless.
// 4. begin() lends one connection to the calling thread for a database transaction: until the
//    Transaction ends, every run() on that thread goes to it, inside BEGIN ... COMMIT.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "service/postgres/pg_conn.h"

namespace holdfast::pg {

struct Statement {
  std::string name;
  std::string sql;
};

class PgPool {
 public:
  // `session_setup` runs on every new connection first (e.g. SET statement_timeout = ...).
  static Result<std::unique_ptr<PgPool>> open(std::string url, std::size_t size,
                                              std::string session_setup,
                                              std::vector<Statement> statements);
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  Result<Rows> run(const std::string& name, const Params& params);

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

  // True when `pid` is the backend of one of this pool's connections (notifications this node
  // sent itself are recognised by it).
  bool is_own_backend(int pid) const;
  std::uint64_t statements_run() const;
  const std::string& url() const { return url_; }

 private:
  PgPool(std::string url, std::string session_setup, std::vector<Statement> statements)
      : url_(std::move(url)),
        session_setup_(std::move(session_setup)),
        statements_(std::move(statements)) {}
  Result<std::unique_ptr<PgConn>> connect_slot();
  std::size_t take();
  // A slot's connection, reconnected if it broke; nullptr (and the slot given back) on failure.
  Result<std::unique_ptr<PgConn>> lend(std::size_t slot);
  void give_back(std::size_t slot, std::unique_ptr<PgConn> conn);

  const std::string url_;
  const std::string session_setup_;
  const std::vector<Statement> statements_;
  mutable std::mutex mu_;
  std::condition_variable free_cv_;
  std::vector<std::unique_ptr<PgConn>> conns_;  // null while lent out or broken
  std::vector<bool> lent_;
  std::vector<int> pids_;  // backend pid per slot, 0 when none
  std::uint64_t statements_run_ = 0;
};

}  // namespace holdfast::pg
