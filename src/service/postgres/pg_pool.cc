#include "service/postgres/pg_pool.h"

#include <algorithm>

namespace holdfast::pg {

Result<std::unique_ptr<PgPool>> PgPool::open(std::string url, std::size_t size,
                                             std::string session_setup,
                                             std::vector<Statement> statements) {
  std::unique_ptr<PgPool> pool(
      new PgPool(std::move(url), std::move(session_setup), std::move(statements)));
  size = std::max<std::size_t>(size, 1);
  for (std::size_t i = 0; i < size; ++i) {
    auto conn = pool->connect_slot();
    if (!conn.ok()) return std::move(conn).error();
    pool->pids_.push_back((*conn)->backend_pid());
    pool->conns_.push_back(std::move(*conn));
    pool->lent_.push_back(false);
  }
  return pool;
}

Result<std::unique_ptr<PgConn>> PgPool::connect_slot() {
  auto conn = PgConn::connect(url_);
  if (!conn.ok()) return conn;
  if (auto r = (*conn)->exec(session_setup_); !r.ok()) return std::move(r).error();
  for (const Statement& s : statements_) {
    if (auto st = (*conn)->prepare(s.name, s.sql); !st.ok()) return std::move(st).error();
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
  if (!conn || conn->broken() || conn->closed_by_server()) {
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

Result<Rows> PgPool::run(const std::string& name, const Params& params) {
  if (pinned != nullptr && pinned_pool == this) return pinned->run(name, params);
  const std::size_t slot = take();
  auto conn = lend(slot);
  if (!conn.ok()) return std::move(conn).error();
  auto rows = (*conn)->run(name, params);
  if ((*conn)->broken()) conn->reset();
  give_back(slot, std::move(*conn));
  return rows;
}

Result<std::unique_ptr<PgPool::Transaction>> PgPool::begin() {
  const std::size_t slot = take();
  auto conn = lend(slot);
  if (!conn.ok()) return std::move(conn).error();
  if (auto r = (*conn)->exec("BEGIN"); !r.ok()) {
    if ((*conn)->broken()) conn->reset();
    give_back(slot, std::move(*conn));
    return std::move(r).error();
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
  auto r = conn_->exec("COMMIT");
  end(nullptr);
  if (!r.ok()) return std::move(r).error();
  return ok_status();
}

void PgPool::Transaction::end(const char* sql) {
  if (sql != nullptr) (void)conn_->exec(sql);
  pinned = nullptr;
  pinned_pool = nullptr;
  if (conn_->broken()) conn_.reset();
  pool_.give_back(slot_, std::move(conn_));
}

bool PgPool::is_own_backend(int pid) const {
  std::lock_guard lock(mu_);
  return std::find(pids_.begin(), pids_.end(), pid) != pids_.end();
}

std::uint64_t PgPool::statements_run() const {
  std::lock_guard lock(mu_);
  return statements_run_;
}

}  // namespace holdfast::pg
