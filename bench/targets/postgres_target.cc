// PostgreSQL target and its libpq LockClient: see postgres_target.h.
//
// The client runs libpq in non-blocking mode inside the harness's event loop:
//   1. an operation is queued; at the loop's flush point, if no query is active, the oldest
//      queued one is sent with PQsendQueryPrepared (libpq allows one query at a time on a
//      connection outside pipeline mode, and the workloads that use PostgreSQL keep one
//      operation in flight per connection anyway);
//   2. PQflush; if the socket is full, EPOLLOUT finishes the job;
//   3. on EPOLLIN, PQconsumeInput, then PQgetResult while it would not block: the row ("t" or
//      "f"; any row for a blocking pg_advisory_lock, whose lock_timeout running out is SQLSTATE
//      55P03) is remembered and the operation is answered when libpq returns the NULL that ends
//      the query (only then may the next query be sent).
#include "postgres_target.h"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <stdexcept>
#include <string_view>

#include "postgres_server.h"

namespace holdfast::bench {

namespace {

class PgLockClient final : public LockClient, private IoHandler, private Flushable {
 public:
  PgLockClient(EventLoop& loop, PGconn* conn) : loop_(loop), conn_(conn) {
    PQsetnonblocking(conn_, 1);
    fd_ = PQsocket(conn_);
    loop_.watch(fd_, EPOLLIN, this);
  }
  ~PgLockClient() override {
    loop_.forget(this);
    if (fd_ >= 0) loop_.unwatch(fd_);
    PQfinish(conn_);
  }

  void try_acquire(std::uint64_t lock, std::uint32_t, std::uint64_t tag) override {
    queue({OpKind::kTryAcquire, lock, tag, 0});
  }
  // The session waits in the server's lock queue, for up to timeout_ms (its lock_timeout).
  void acquire(std::uint64_t lock, std::uint32_t, std::uint32_t timeout_ms,
               std::uint64_t tag) override {
    queue({OpKind::kAcquire, lock, tag, std::max<std::uint32_t>(timeout_ms, 1)});  // 0: no limit
  }
  void release(std::uint64_t lock, std::string_view, std::uint64_t tag) override {
    queue({OpKind::kRelease, lock, tag, 0});
  }
  std::size_t in_flight() const override { return pending_.size(); }
  bool healthy() const override { return fd_ >= 0; }

 private:
  struct Pending {
    OpKind kind;
    std::uint64_t lock;
    std::uint64_t tag;
    std::uint32_t timeout_ms;  // kAcquire
  };

  void queue(Pending p) {
    if (fd_ < 0) {
      deliver({p.kind, OpStatus::kError, p.tag, {}, "connection closed"});
      return;
    }
    pending_.push_back(p);
    loop_.mark_dirty(this);
  }

  void flush() override {
    if (fd_ < 0) return;
    if (!active_ && !pending_.empty()) {
      const Pending& p = pending_.front();
      char lock[24], timeout[24];
      *std::to_chars(lock, lock + sizeof lock - 1, static_cast<std::int64_t>(p.lock)).ptr = '\0';
      *std::to_chars(timeout, timeout + sizeof timeout - 1, p.timeout_ms).ptr = '\0';
      const char* values[2] = {lock, timeout};
      const char* statement = p.kind == OpKind::kTryAcquire ? "try_lock"
                              : p.kind == OpKind::kAcquire  ? "lock"
                                                            : "unlock";
      const int params = p.kind == OpKind::kAcquire ? 2 : 1;
      if (PQsendQueryPrepared(conn_, statement, params, values, nullptr, nullptr, 0) != 1) {
        fail(PQerrorMessage(conn_));
        return;
      }
      active_ = true;
      result_ = Result::kNone;
    }
    const int f = PQflush(conn_);
    if (f < 0) {
      fail(PQerrorMessage(conn_));
    } else if ((f == 1) != want_write_) {
      want_write_ = f == 1;
      loop_.rewatch(fd_, want_write_ ? (EPOLLIN | EPOLLOUT) : EPOLLIN, this);
    }
  }

  void on_io(std::uint32_t events) override {
    if (events & EPOLLOUT) flush();
    if (fd_ < 0 || !(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
    if (PQconsumeInput(conn_) != 1) {
      fail(PQerrorMessage(conn_));
      return;
    }
    while (active_ && !PQisBusy(conn_)) {
      PGresult* res = PQgetResult(conn_);
      if (res == nullptr) {
        complete();
        continue;
      }
      if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
        // pg_advisory_lock returns void: its row is the grant.
        const bool granted = pending_.front().kind == OpKind::kAcquire ||
                             PQgetvalue(res, 0, PQnfields(res) - 1)[0] == 't';
        result_ = granted ? Result::kTrue : Result::kFalse;
      } else if (const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
                 state != nullptr && std::string_view(state) == "55P03") {
        result_ = Result::kTimeout;  // lock_not_available: lock_timeout ran out
      } else {
        result_ = Result::kError;
        error_ = PQresultErrorMessage(res);
      }
      PQclear(res);
    }
  }

  void complete() {
    active_ = false;
    const Pending p = pending_.front();
    pending_.pop_front();
    if (!pending_.empty()) loop_.mark_dirty(this);
    OpReply reply{p.kind, OpStatus::kError, p.tag, {}, {}};
    if (result_ == Result::kError || result_ == Result::kNone) {
      reply.detail = result_ == Result::kNone ? std::string_view("no result row") : error_;
    } else if (result_ == Result::kTimeout) {
      reply.status = p.kind == OpKind::kAcquire ? OpStatus::kTimeout : OpStatus::kError;
    } else if (p.kind != OpKind::kRelease) {
      reply.status = result_ == Result::kTrue ? OpStatus::kGranted : OpStatus::kBusy;
    } else {
      reply.status = result_ == Result::kTrue ? OpStatus::kReleased : OpStatus::kNotHeld;
    }
    deliver(reply);
  }

  void fail(const char* why) {
    if (fd_ < 0) return;
    loop_.unwatch(fd_);
    fd_ = -1;
    const std::string reason = why;
    while (!pending_.empty()) {
      const Pending p = pending_.front();
      pending_.pop_front();
      deliver({p.kind, OpStatus::kError, p.tag, {}, reason});
    }
  }

  enum class Result : std::uint8_t { kNone, kTrue, kFalse, kTimeout, kError };

  EventLoop& loop_;
  PGconn* conn_;
  int fd_ = -1;
  std::deque<Pending> pending_;
  bool active_ = false;
  bool want_write_ = false;
  Result result_ = Result::kNone;
  std::string error_;
};

class PostgresTarget final : public Target {
 public:
  explicit PostgresTarget(std::filesystem::path scripts_dir) : server_(std::move(scripts_dir)) {}
  ~PostgresTarget() override { stop(); }

  std::string name() const override { return "postgres"; }
  std::string description() const override {
    return "PostgreSQL " + server_.version() +
           "; pg_try_advisory_lock or a blocking pg_advisory_lock (its lock_timeout the "
           "acquire's timeout) / pg_advisory_unlock, prepared";
  }

  void start(const std::filesystem::path& dir) override { server_.start(dir / "pg"); }
  void stop() override { server_.stop(); }
  pid_t server_pid() const override { return server_.pid(); }
  std::string sql_conninfo() const override { return server_.conninfo(); }
  bool supports_blocking_acquire() const override { return true; }

  std::unique_ptr<LockClient> connect(EventLoop& loop) override {
    return std::make_unique<PgLockClient>(loop, open_connection());
  }

 private:
  PGconn* open_connection() {
    PGconn* conn = PQconnectdb(server_.conninfo().c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
      const std::string err = PQerrorMessage(conn);
      PQfinish(conn);
      throw std::runtime_error("cannot connect to PostgreSQL: " + err);
    }
    prepare(conn, "try_lock", "SELECT pg_try_advisory_lock($1::bigint)");
    // The target list runs in order: the timeout is set before the wait begins.
    prepare(conn, "lock",
            "SELECT set_config('lock_timeout', $2::text, false), pg_advisory_lock($1::bigint)");
    prepare(conn, "unlock", "SELECT pg_advisory_unlock($1::bigint)");
    return conn;
  }

  static void prepare(PGconn* conn, const char* name, const char* sql) {
    PGresult* res = PQprepare(conn, name, sql, 0, nullptr);
    const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    if (!ok) {
      const std::string err = PQerrorMessage(conn);
      PQfinish(conn);
      throw std::runtime_error(std::string("PREPARE ") + name + ": " + err);
    }
  }

  PostgresServer server_;
};

}  // namespace

std::unique_ptr<Target> make_postgres_target(std::filesystem::path scripts_dir) {
  return std::make_unique<PostgresTarget>(std::move(scripts_dir));
}

}  // namespace holdfast::bench
