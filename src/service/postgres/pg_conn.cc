#include "service/postgres/pg_conn.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace holdfast::pg {

void append_array_element(std::string& out, const std::optional<std::string>& value) {
  if (!value) {
    out += "NULL";
    return;
  }
  out += '"';
  for (char c : *value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

Params& Params::text_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    append_array_element(out, values[i]);
  }
  return text(out + "}");
}

Params& Params::text(std::string_view value) {
  values_.emplace_back(std::string(value));
  return *this;
}

Params& Params::maybe_text(const std::optional<std::string_view>& value) {
  return value ? text(*value) : null();
}

Params& Params::number(std::int64_t value) {
  values_.emplace_back(std::to_string(value));
  return *this;
}

Params& Params::maybe_number(const std::optional<std::int64_t>& value) {
  return value ? number(*value) : null();
}

Params& Params::null() {
  values_.emplace_back(std::nullopt);
  return *this;
}

std::vector<const char*> Params::pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

std::string_view Rows::text(int row, int col) const {
  const char* v = PQgetvalue(result_.get(), row, col);
  return std::string_view(v, static_cast<std::size_t>(PQgetlength(result_.get(), row, col)));
}

std::int64_t Rows::number(int row, int col) const { return maybe_number(row, col).value_or(0); }

std::optional<std::int64_t> Rows::maybe_number(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  std::string_view t = text(row, col);
  std::int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

std::int64_t Rows::affected() const {
  if (!result_) return 0;
  std::string_view t = PQcmdTuples(result_.get());
  std::int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

bool Rows::succeeded() const {
  const ExecStatusType s = result_ ? PQresultStatus(result_.get()) : PGRES_FATAL_ERROR;
  return s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK;
}

std::optional<std::string> Rows::maybe_text(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  return std::string(text(row, col));
}

Rows Rows::part(std::optional<int> row, int first, int count) const {
  PGresult* out = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
  if (out == nullptr) return Rows();
  std::vector<PGresAttDesc> attrs(static_cast<std::size_t>(count));
  for (int c = 0; c < count; ++c) {
    PGresAttDesc& a = attrs[static_cast<std::size_t>(c)];
    a.name = PQfname(result_.get(), first + c);
    a.tableid = PQftable(result_.get(), first + c);
    a.columnid = PQftablecol(result_.get(), first + c);
    a.format = PQfformat(result_.get(), first + c);
    a.typid = PQftype(result_.get(), first + c);
    a.typlen = PQfsize(result_.get(), first + c);
    a.atttypmod = PQfmod(result_.get(), first + c);
  }
  bool ok = PQsetResultAttrs(out, count, attrs.data()) != 0;
  for (int c = 0; ok && row && c < count; ++c) {
    const bool null = is_null(*row, first + c);
    // PQsetvalue copies the value; a NULL is a length of -1.
    ok = PQsetvalue(out, 0, c, null ? nullptr : PQgetvalue(result_.get(), *row, first + c),
                    null ? -1 : PQgetlength(result_.get(), *row, first + c)) != 0;
  }
  if (!ok) {
    PQclear(out);
    return Rows();
  }
  return Rows(out);
}

namespace {

constexpr char kOutcomeDetail[] = "outcome";

std::string trimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

// The defaults every connection starts from; later keywords override earlier ones, so the
// caller's settings (and the URL, expanded from dbname) win over these.
constexpr std::pair<const char*, const char*> kDefaults[] = {
    {"application_name", "holdfast"}, {"keepalives", "1"},       {"keepalives_idle", "10"},
    {"keepalives_interval", "5"},     {"keepalives_count", "3"}, {"client_encoding", "UTF8"},
};

}  // namespace

Error unknown_outcome(std::string message) {
  return Error(ErrorCode::kStoreUnavailable, std::move(message)).with(kOutcomeDetail, "unknown");
}

bool is_unknown_outcome(const Error& e) {
  if (e.code != ErrorCode::kStoreUnavailable) return false;
  for (const auto& [name, value] : e.details)
    if (name == kOutcomeDetail) return true;
  return false;
}

PgConn::PgConn(PGconn* conn, std::string label, Millis timeout_ms)
    : conn_(conn), label_(std::move(label)), timeout_ms_(timeout_ms) {}

PgConn::~PgConn() { close(); }

void PgConn::close() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

Result<std::unique_ptr<PgConn>> PgConn::connect(const ConnParams& params, const Deadline& by) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : kDefaults) {
    keys.push_back(k);
    values.push_back(v);
  }
  for (const auto& [k, v] : params.settings) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectStartParams(keys.data(), values.data(), /*expand_dbname=*/0);
  const Millis left = std::max<Millis>(1, std::chrono::duration_cast<std::chrono::milliseconds>(
                                              by.at - std::chrono::steady_clock::now())
                                              .count());
  return finish_connect(conn, params.label, by, left);
}

Result<std::unique_ptr<PgConn>> PgConn::connect(const std::string& url, Millis timeout_ms) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : kDefaults) {
    keys.push_back(k);
    values.push_back(v);
  }
  keys.push_back("dbname");
  values.push_back(url.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectStartParams(keys.data(), values.data(), /*expand_dbname=*/1);
  return finish_connect(conn, redact_url(url), Deadline::in(timeout_ms), timeout_ms);
}

Result<std::unique_ptr<PgConn>> PgConn::finish_connect(PGconn* conn, std::string label,
                                                       const Deadline& by, Millis timeout_ms) {
  if (conn == nullptr)
    return Error(ErrorCode::kUnavailable, "cannot connect to PostgreSQL: out of memory");
  std::unique_ptr<PgConn> out(new PgConn(conn, std::move(label), timeout_ms));
  auto failed = [&](const std::string& why) -> Error {
    return Error(ErrorCode::kUnavailable,
                 "cannot connect to PostgreSQL at " + out->label_ + ": " + why);
  };
  if (PQstatus(conn) == CONNECTION_BAD) return failed(trimmed(PQerrorMessage(conn)));
  // As if PQconnectPoll had last answered WRITING (libpq's documented start).
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;
  while (state != PGRES_POLLING_OK) {
    if (state == PGRES_POLLING_FAILED) return failed(trimmed(PQerrorMessage(conn)));
    // The socket can change between calls (the next host of a list).
    if (!out->wait_for(state == PGRES_POLLING_READING ? POLLIN : POLLOUT, by)) {
      return failed(by.aborted() ? "the primary changed meanwhile"
                                 : "no answer within " + std::to_string(timeout_ms) + " ms");
    }
    state = PQconnectPoll(conn);
  }
  if (PQsetnonblocking(conn, 1) != 0) return failed("cannot make the connection non-blocking");
  // Notices (e.g. "relation already exists, skipping") are not errors and stay off stderr;
  // the one that says a commit may not be on the standby makes its statement fail.
  PQsetNoticeReceiver(conn, &PgConn::on_notice, out.get());
  return out;
}

void PgConn::on_notice(void* self, const PGresult* notice) {
  const char* severity = PQresultErrorField(notice, PG_DIAG_SEVERITY_NONLOCALIZED);
  const char* code = PQresultErrorField(notice, PG_DIAG_SQLSTATE);
  if (severity == nullptr || code == nullptr || std::strcmp(severity, "WARNING") != 0) return;
  if (std::strcmp(code, "01000") != 0 && std::strcmp(code, "57P01") != 0) return;
  const char* message = PQresultErrorField(notice, PG_DIAG_MESSAGE_PRIMARY);
  static_cast<PgConn*>(self)->replication_warning_ =
      message != nullptr ? std::string(message) : std::string("WARNING ") + code;
}

bool PgConn::wait_for(short events, const Deadline& by) {
  // Slices of at most 100 ms, so a change of primary ends the wait soon.
  constexpr Millis kSliceMs = 100;
  for (;;) {
    if (by.aborted()) return false;
    const Millis left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            by.at - std::chrono::steady_clock::now())
                            .count();
    if (left <= 0) return false;
    pollfd p{PQsocket(conn_), events, 0};
    if (p.fd < 0) return true;  // let libpq report what happened to its socket
    const int n = ::poll(&p, 1, static_cast<int>(std::min(left, kSliceMs)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;
  }
}

Result<std::vector<Rows>> PgConn::collect(bool sent, std::string_view what, const Deadline& by) {
  primary_suspect_ = false;
  const std::string context = "PostgreSQL at " + label_ + ": " + std::string(what) + ": ";
  if (!sent) {
    // Nothing left this side: the statement cannot have run.
    std::string message = conn_ ? trimmed(PQerrorMessage(conn_)) : "the connection is closed";
    primary_suspect_ = broken();
    if (broken()) close();
    return Error(ErrorCode::kUnavailable, context + message);
  }
  auto lost = [&](const std::string& why) -> Error {
    primary_suspect_ = true;
    close();
    return unknown_outcome(context + why + "; it may or may not have taken effect");
  };
  auto no_answer = [&]() -> Error {
    if (by.aborted()) return lost("abandoned: the primary changed while it ran");
    return lost(
        "no answer within the statement deadline ([store] statementDeadlineMs); its "
        "connection was closed");
  };
  // Push the whole statement out (libpq's non-blocking send loop).
  for (;;) {
    const int flushed = PQflush(conn_);
    if (flushed == 0) break;
    if (flushed < 0) return lost("the connection broke (" + trimmed(PQerrorMessage(conn_)) + ")");
    if (!wait_for(POLLIN | POLLOUT, by)) return no_answer();
    if (PQconsumeInput(conn_) == 0)
      return lost("the connection broke (" + trimmed(PQerrorMessage(conn_)) + ")");
  }
  std::vector<Rows> results;
  bool done = false;
  while (!done) {
    while (!PQisBusy(conn_)) {
      PGresult* r = PQgetResult(conn_);
      if (r == nullptr) {
        done = true;
        break;
      }
      results.emplace_back(r);
    }
    if (done) break;
    if (!wait_for(POLLIN, by)) return no_answer();
    if (PQconsumeInput(conn_) == 0)
      return lost("the connection broke (" + trimmed(PQerrorMessage(conn_)) + ")");
  }
  if (broken()) {
    std::string why = trimmed(PQerrorMessage(conn_));
    for (const Rows& r : results)
      if (!r.succeeded()) why = trimmed(PQresultErrorMessage(r.raw()));
    return lost("the connection broke (" + why + ")");
  }
  if (replication_warning_) {
    std::string warning = std::move(*replication_warning_);
    replication_warning_.reset();
    // Committed here, perhaps not on the standby: a failover may lose it. Not done.
    return unknown_outcome(context + "the commit came with the warning \"" + warning +
                           "\": it may not have been replicated to the standby");
  }
  return results;
}

Error PgConn::failed(const Rows& result, std::string_view what) {
  const PGresult* r = result.raw();
  // The schema raises HF001 when a lock would be made on a key holding a typed value
  // (schema_values.cc): the keyspace's WRONGTYPE, not a failure of the database.
  if (const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
      state != nullptr && std::string_view(state) == kWrongTypeSqlState)
    return Error(ErrorCode::kWrongType, "Operation against a key holding the wrong kind of value");
  std::string message = r ? trimmed(PQresultErrorMessage(r)) : std::string();
  if (message.empty()) message = "no result";
  const char* code = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  // 25006: "cannot execute ... in a read-only transaction": the server became a standby.
  primary_suspect_ = code != nullptr && std::strcmp(code, "25006") == 0;
  return Error(ErrorCode::kUnavailable,
               "PostgreSQL at " + label_ + ": " + std::string(what) + ": " + message);
}

Result<Rows> PgConn::await(bool sent, std::string_view what, const Deadline& by) {
  auto results = collect(sent, what, by);
  if (!results.ok()) return std::move(results).error();
  // The first error, else the last result.
  Rows* kept = nullptr;
  for (Rows& r : *results) {
    kept = &r;
    if (!r.succeeded()) break;
  }
  if (kept == nullptr) return failed(Rows(), what);
  if (!kept->succeeded()) return failed(*kept, what);
  return std::move(*kept);
}

Result<std::vector<Rows>> PgConn::exec_each(const std::string& sql, const Deadline& by) {
  const bool sent = conn_ != nullptr && PQsendQuery(conn_, sql.c_str()) == 1;
  return collect(sent, "batch", by);
}

std::optional<std::string> PgConn::literal(std::string_view value) {
  if (conn_ == nullptr) return std::nullopt;
  char* quoted = PQescapeLiteral(conn_, value.data(), value.size());
  if (quoted == nullptr) return std::nullopt;
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

bool PgConn::closed_by_server() {
  if (conn_ == nullptr) return true;
  pollfd p{PQsocket(conn_), POLLIN, 0};
  if (p.fd < 0) return true;
  // An idle pooled connection has nothing to read unless the server said goodbye (a FATAL
  // "terminating connection", then EOF; libpq would report it only on the next statement).
  // Anything else unasked (a stray NOTICE) costs at most a reconnect.
  return ::poll(&p, 1, 0) != 0;
}

Status PgConn::prepare(const std::string& name, const std::string& sql, const Deadline& by) {
  const bool sent =
      conn_ != nullptr && PQsendPrepare(conn_, name.c_str(), sql.c_str(), 0, nullptr) == 1;
  auto r = await(sent, "prepare " + name, by);
  if (!r.ok()) return std::move(r).error();
  return ok_status();
}

Result<Rows> PgConn::run(const std::string& name, const Params& params, const Deadline& by) {
  auto ptrs = params.pointers();
  const bool sent = conn_ != nullptr && PQsendQueryPrepared(conn_, name.c_str(), params.size(),
                                                            ptrs.data(), nullptr, nullptr, 0) == 1;
  return await(sent, name, by);
}

Result<Rows> PgConn::exec(const std::string& sql, const Deadline& by) {
  const bool sent = conn_ != nullptr && PQsendQuery(conn_, sql.c_str()) == 1;
  return await(sent, "statement", by);
}

Result<Rows> PgConn::exec(const std::string& sql, const Params& params, const Deadline& by) {
  auto ptrs = params.pointers();
  const bool sent =
      conn_ != nullptr && PQsendQueryParams(conn_, sql.c_str(), params.size(), nullptr, ptrs.data(),
                                            nullptr, nullptr, 0) == 1;
  return await(sent, "statement", by);
}

std::string redact_url(std::string_view url) {
  // postgres://user:secret@host/db -> postgres://user:***@host/db
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url.substr(0, url.find("password")));
  auto at = url.find('@', scheme + 3);
  if (at == std::string_view::npos) return std::string(url);
  auto colon = url.find(':', scheme + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

}  // namespace holdfast::pg
