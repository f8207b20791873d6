#include "service/postgres/pg_pool.h"

#include <algorithm>

namespace holdfast::pg {

PgPool::PgPool(Primary& primary, std::string session_setup, std::vector<Statement> statements)
    : primary_(primary),
      session_setup_(std::move(session_setup)),
      statements_(std::move(statements)) {}

Result<std::unique_ptr<PgPool>> PgPool::open(Primary& primary, std::size_t size,
                                             std::string session_setup,
                                             std::vector<Statement> statements,
                                             Millis open_round_trip_ms) {
  std::unique_ptr<PgPool> pool(
      new PgPool(primary, std::move(session_setup), std::move(statements)));
  size = std::max<std::size_t>(size, 1);
  for (std::size_t i = 0; i < size; ++i) {
    auto conn = pool->connect_slot(open_round_trip_ms);
    if (!conn.ok()) return std::move(conn).error();
    pool->pids_.push_back((*conn)->backend_pid());
    pool->conns_.push_back(std::move(*conn));
    pool->lent_.push_back(false);
  }
  return pool;
}

void PgPool::set_write_gate(std::function<std::optional<Error>()> gate) { gate_ = std::move(gate); }

const Statement* PgPool::find(const std::string& name) const {
  for (const Statement& s : statements_)
    if (s.name == name) return &s;
  return nullptr;
}

Result<std::unique_ptr<PgConn>> PgPool::connect_slot(Millis round_trip_ms) {
  auto conn = primary_.connect();
  if (!conn.ok()) return conn;
  const Millis ms = std::max(round_trip_ms, primary_.deadline_ms());
  if (!session_setup_.empty()) {
    if (auto r = (*conn)->exec(session_setup_, primary_.deadline((*conn)->epoch, ms)); !r.ok())
      return std::move(r).error();
  }
  for (const Statement& s : statements_) {
    if (auto st = (*conn)->prepare(s.name, s.sql, primary_.deadline((*conn)->epoch, ms)); !st.ok())
      return std::move(st).error();
  }
  return conn;
}

std::size_t PgPool::take() {
  std::unique_lock lock(mu_);
  for (;;) {
    for (std::size_t i = 0; i < lent_.size(); ++i) {
      if (!lent_[i]) {
        lent_[i] = true;
        return i;
      }
    }
    free_cv_.wait(lock);
  }
}

void PgPool::give_back(std::size_t slot, std::unique_ptr<PgConn> conn) {
  {
    std::lock_guard lock(mu_);
    pids_[slot] = conn ? conn->backend_pid() : 0;
    conns_[slot] = std::move(conn);
    lent_[slot] = false;
    ++statements_run_;
  }
  free_cv_.notify_one();
}

namespace {

// The connection of the transaction the calling thread has open, and its pool.
thread_local PgConn* pinned = nullptr;
thread_local const PgPool* pinned_pool = nullptr;

}  // namespace

Result<std::unique_ptr<PgConn>> PgPool::lend(std::size_t slot) {
  std::unique_ptr<PgConn> conn;
  {
    std::lock_guard lock(mu_);
    conn = std::move(conns_[slot]);
  }
  if (!conn || conn->broken() || conn->epoch != primary_.epoch() || conn->closed_by_server()) {
    conn.reset();
    auto fresh = connect_slot();
    if (!fresh.ok()) {
      give_back(slot, nullptr);
      return std::move(fresh).error();
    }
    conn = std::move(*fresh);
  }
  return conn;
}

void PgPool::after_failure(PgConn& conn, const Error& error) {
  if (conn.primary_suspect()) primary_.lost(conn.epoch, error.message);
}

Result<Rows> PgPool::run_on(PgConn& conn, const std::string& name, const Params& params) {
  const Statement* statement = find(name);
  const bool writes = statement == nullptr || statement->writes;
  if (writes && gate_) {
    if (auto refused = gate_()) return std::move(*refused);
  }
  auto rows = conn.run(name, params, primary_.deadline(conn.epoch));
  if (rows.ok()) return rows;
  Error error = std::move(rows).error();
  after_failure(conn, error);
  // A read that did not answer changed nothing: its outcome is no question.
  if (!writes && is_unknown_outcome(error)) return Error(ErrorCode::kUnavailable, error.message);
  return error;
}

Result<Rows> PgPool::run(const std::string& name, const Params& params) {
  if (pinned != nullptr && pinned_pool == this) return run_on(*pinned, name, params);
  const std::size_t slot = take();
  auto conn = lend(slot);
  if (!conn.ok()) return std::move(conn).error();
  auto rows = run_on(**conn, name, params);
  if ((*conn)->broken()) conn->reset();
  give_back(slot, std::move(*conn));
  return rows;
}

Result<std::vector<Rows>> PgPool::run_batch(const std::vector<Call>& calls) {
  const std::size_t slot = take();
  auto conn = lend(slot);
  if (!conn.ok()) return std::move(conn).error();
  PgConn& c = **conn;
  auto out = [&]() -> Result<std::vector<Rows>> {
    if (gate_) {
      if (auto refused = gate_()) return std::move(*refused);
    }
    std::string sql;
    for (const Call& call : calls) {
      sql += "EXECUTE ";
      sql += *call.name;
      const auto& values = call.params->values();
      for (std::size_t i = 0; i < values.size(); ++i) {
        sql += i == 0 ? "(" : ", ";
        if (!values[i]) {
          sql += "NULL";
          continue;
        }
        auto quoted = c.literal(*values[i]);
        if (!quoted) {
          // Not sent: the caller runs each statement alone, and this one fails on its own.
          std::vector<Rows> none;
          none.emplace_back();
          return none;
        }
        sql += *quoted;
      }
      if (!values.empty()) sql += ")";
      sql += ";\n";
    }
    auto results = c.exec_each(sql, primary_.deadline(c.epoch));
    if (!results.ok()) {
      after_failure(c, results.error());
      return results;
    }
    for (const Rows& r : *results) {
      if (!r.succeeded()) {
        after_failure(c, c.failed(r, "batch"));
        break;
      }
    }
    return results;
  }();
  if (c.broken()) conn->reset();
  give_back(slot, std::move(*conn));
  return out;
}

Result<std::unique_ptr<PgPool::Transaction>> PgPool::begin() {
  const std::size_t slot = take();
  auto conn = lend(slot);
  if (!conn.ok()) return std::move(conn).error();
  if (auto r = (*conn)->exec("BEGIN", primary_.deadline((*conn)->epoch)); !r.ok()) {
    after_failure(**conn, r.error());
    if ((*conn)->broken()) conn->reset();
    give_back(slot, std::move(*conn));
    return Error(ErrorCode::kUnavailable, r.error().message);
  }
  return std::unique_ptr<Transaction>(new Transaction(*this, slot, std::move(*conn)));
}

PgPool::Transaction::Transaction(PgPool& pool, std::size_t slot, std::unique_ptr<PgConn> conn)
    : pool_(pool), slot_(slot), conn_(std::move(conn)) {
  pinned = conn_.get();
  pinned_pool = &pool_;
}

PgPool::Transaction::~Transaction() {
  if (conn_) end("ROLLBACK");
}

Status PgPool::Transaction::commit() {
  if (pool_.gate_) {
    if (auto refused = pool_.gate_()) {
      end("ROLLBACK");
      return std::move(*refused);
    }
  }
  auto r = conn_->exec("COMMIT", pool_.primary_.deadline(conn_->epoch));
  if (!r.ok()) pool_.after_failure(*conn_, r.error());
  end(nullptr);
  if (!r.ok()) return std::move(r).error();
  return ok_status();
}

void PgPool::Transaction::end(const char* sql) {
  if (sql != nullptr && !conn_->broken())
    (void)conn_->exec(sql, pool_.primary_.deadline(conn_->epoch));
  pinned = nullptr;
  pinned_pool = nullptr;
  if (conn_->broken()) conn_.reset();
  pool_.give_back(slot_, std::move(conn_));
}

bool PgPool::in_transaction() const { return pinned != nullptr && pinned_pool == this; }

bool PgPool::is_own_backend(int pid) const {
  std::lock_guard lock(mu_);
  return std::find(pids_.begin(), pids_.end(), pid) != pids_.end();
}

std::uint64_t PgPool::statements_run() const {
  std::lock_guard lock(mu_);
  return statements_run_;
}

}  // namespace holdfast::pg
