#include "handoff.h"

#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

#include "clock.h"
#include "net.h"
#include "resp.h"

namespace holdfast::bench {
namespace {

constexpr int kReplyTimeoutMs = 10'000;
constexpr std::string_view kKey = "bench:handoff";
constexpr std::string_view kTtlMs = "30000";
constexpr std::string_view kWaitMs = "10000";  // the waiter's TIMEOUT: far above any hand-off

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(kHandoffSettleMs)); }

// One RESP connection used one command at a time.
class RespConn {
 public:
  explicit RespConn(std::uint16_t port) : fd_(connect_loopback(port, kReplyTimeoutMs)) {}
  ~RespConn() {
    if (fd_ >= 0) ::close(fd_);
  }
  RespConn(const RespConn&) = delete;
  RespConn& operator=(const RespConn&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool send(std::initializer_list<std::string_view> args) {
    std::string request;
    resp::append_command(request, args);
    return send_all(fd_, request, kReplyTimeoutMs);
  }
  // Reads the next reply and gives its tokens to `look`; false when no reply came.
  template <typename Look>
  bool next(Look&& look) {
    for (;;) {
      const resp::ParseResult r = resp::parse_reply(in_, tokens_);
      if (r.status == resp::ParseStatus::kComplete) {
        look(tokens_);
        last_ = in_.substr(0, std::min<std::size_t>(r.consumed, 200));
        in_.erase(0, r.consumed);
        return true;
      }
      if (r.status == resp::ParseStatus::kMalformed || !recv_some(fd_, in_, kReplyTimeoutMs))
        return false;
    }
  }
  // The next reply's string field `name` ("" when it has none), or none when no reply came.
  std::optional<std::string> text(std::string_view name) {
    std::string value;
    if (!next([&](const std::vector<resp::Token>& t) {
          if (auto f = resp::field(t, name)) value = std::string(f->text);
        }))
      return std::nullopt;
    return value;
  }
  // Whether the next reply's field `name` is a yes.
  bool yes(std::string_view name) {
    bool value = false;
    return next([&](const std::vector<resp::Token>& t) {
             auto f = resp::field(t, name);
             value = f && resp::truthy(*f);
           }) &&
           value;
  }
  // The start of the last reply read, for a failure's message.
  const std::string& last() const { return last_; }

 private:
  int fd_;
  std::string in_, last_;
  std::vector<resp::Token> tokens_;
};

}  // namespace

double HandoffResult::quantile(double q) const {
  if (us.empty()) return 0;
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

HandoffResult resp_handoffs(std::uint16_t holder_port, std::uint16_t waiter_port, int count,
                            std::string target, std::string path) {
  HandoffResult out{std::move(target), std::move(path), {}, {}};
  auto fail = [&](std::string why) {
    out.failure = std::move(why);
    return out;
  };
  RespConn holder(holder_port), waiter(waiter_port);
  if (!holder.connected() || !waiter.connected()) return fail("cannot connect");
  auto ask = [](RespConn& c) {
    return c.send({"LOCK.ACQUIRE", kKey, "TTL", kTtlMs, "TIMEOUT", kWaitMs});
  };
  for (int i = 0; i < count; ++i) {
    std::optional<std::string> held;
    if (ask(holder)) held = holder.text("handle");
    if (!held || held->empty()) return fail("the holder was not granted the key: " + holder.last());
    if (!ask(waiter)) return fail("the waiter's request was not sent");
    settle();
    const std::int64_t released_at = now_ns();
    if (!holder.send({"LOCK.RELEASE", kKey, *held})) return fail("the release was not sent");
    const std::optional<std::string> granted = waiter.text("handle");
    const std::int64_t granted_at = now_ns();
    if (!granted || granted->empty())
      return fail("the waiter was not granted the key: " + waiter.last());
    if (!holder.yes("released"))
      return fail("the holder's release was not answered released: " + holder.last());
    out.us.push_back(static_cast<double>(granted_at - released_at) / 1000.0);
    if (!waiter.send({"LOCK.RELEASE", kKey, *granted}) || !waiter.yes("released"))
      return fail("the waiter's release failed: " + waiter.last());
  }
  return out;
}

HandoffResult advisory_handoffs(const std::string& conninfo, int count, std::string target) {
  HandoffResult out{std::move(target), "session → session", {}, {}};
  struct Finish {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  using Conn = std::unique_ptr<PGconn, Finish>;
  const Conn holder_conn(PQconnectdb(conninfo.c_str())), waiter_conn(PQconnectdb(conninfo.c_str()));
  PGconn* holder = holder_conn.get();
  PGconn* waiter = waiter_conn.get();
  auto fail = [&](std::string why, PGconn* c) {
    out.failure = std::move(why) + (c ? std::string(": ") + PQerrorMessage(c) : "");
    return out;
  };
  if (PQstatus(holder) != CONNECTION_OK) return fail("cannot connect", holder);
  if (PQstatus(waiter) != CONNECTION_OK) return fail("cannot connect", waiter);
  // One statement's result, or false.
  auto result_ok = [](PGconn* c) {
    bool ok = false;
    for (PGresult* r; (r = PQgetResult(c)) != nullptr; PQclear(r))
      ok = ok || PQresultStatus(r) == PGRES_TUPLES_OK;
    return ok;
  };
  const char* lock = "SELECT pg_advisory_lock(7271)";
  const char* unlock = "SELECT pg_advisory_unlock(7271)";
  for (int i = 0; i < count; ++i) {
    if (!PQsendQuery(holder, lock) || !result_ok(holder)) return fail("holder's lock", holder);
    if (!PQsendQuery(waiter, lock)) return fail("waiter's lock", waiter);
    settle();
    const std::int64_t released_at = now_ns();
    if (!PQsendQuery(holder, unlock)) return fail("holder's unlock", holder);
    // The waiter's result, read as it comes.
    pollfd p{PQsocket(waiter), POLLIN, 0};
    while (PQconsumeInput(waiter) && PQisBusy(waiter)) {
      if (::poll(&p, 1, kReplyTimeoutMs) <= 0) return fail("waiter's lock: no answer", nullptr);
    }
    const std::int64_t granted_at = now_ns();
    if (!result_ok(waiter)) return fail("waiter's lock", waiter);
    if (!result_ok(holder)) return fail("holder's unlock", holder);
    out.us.push_back(static_cast<double>(granted_at - released_at) / 1000.0);
    if (!PQsendQuery(waiter, unlock) || !result_ok(waiter)) return fail("waiter's unlock", waiter);
  }
  return out;
}

void handoff_table(std::ostream& out, const std::vector<HandoffResult>& results) {
  if (results.empty()) return;
  out << "## (n) Hand-off latency\n\n"
         "A waiter already blocked on a key, and its holder's release: from the release leaving "
         "the holder's client to the grant reaching the waiter's, one hand-off at a time (the "
         "waiter's request is given "
      << kHandoffSettleMs
      << " ms to reach its queue first). Holdfast: `LOCK.ACQUIRE` waiting in the server's queue "
         "and `LOCK.RELEASE`, on one server, or over PostgreSQL with both clients on one node or "
         "on two; PostgreSQL: a session blocked in `pg_advisory_lock` and the holder's "
         "`pg_advisory_unlock`.\n\n"
         "| target | holder → waiter | hand-offs | p50 µs | p99 µs | max µs |\n"
         "|---|---|---:|---:|---:|---:|\n";
  char line[256];
  for (const HandoffResult& r : results) {
    if (!r.failure.empty()) {
      out << "| " << r.target << " | " << r.path << " | failed: " << r.failure << " | | | |\n";
      continue;
    }
    std::snprintf(line, sizeof line, "| %s | %s | %zu | %.0f | %.0f | %.0f |\n", r.target.c_str(),
                  r.path.c_str(), r.us.size(), r.quantile(0.5), r.quantile(0.99), r.quantile(1.0));
    out << line;
  }
  out << "\n";
}

}  // namespace holdfast::bench
