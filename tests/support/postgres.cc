#include "support/postgres.h"

#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace holdfast::testing {
namespace {

std::string script(const char* name) {
  return std::string(HOLDFAST_SOURCE_DIR) + "/scripts/" + name;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

TestPostgres::TestPostgres() {
  std::string pattern = "/tmp/holdfast-pg-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  // mkdtemp makes the folder 0700; the server runs as user 'postgres' when we are root.
  ::chmod(dir_.c_str(), 0755);
  std::string errors;
  // A port found free can be taken by someone else before the server binds it: retry.
  for (int attempt = 0; attempt < 3 && url_.empty(); ++attempt) {
    port_ = free_port();
    auto r = run({script("start-postgres.sh"), dir_ + "/pg", std::to_string(port_)});
    if (r.exit_code == 0) {
      url_ = trim(r.out);
    } else {
      errors += r.err;
    }
  }
  if (url_.empty()) throw std::runtime_error("PostgreSQL did not start: " + errors);
}

TestPostgres::~TestPostgres() {
  if (!url_.empty()) run({script("stop-postgres.sh"), dir_ + "/pg"});
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void TestPostgres::stop() { run({script("stop-postgres.sh"), dir_ + "/pg"}); }

void TestPostgres::start_again() {
  auto r = run({script("start-postgres.sh"), dir_ + "/pg", std::to_string(port_)});
  if (r.exit_code != 0) throw std::runtime_error("PostgreSQL did not start again: " + r.err);
}

std::string sql_value(const std::string& store_url, const std::string& sql) {
  PGconn* conn = PQconnectdb(store_url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    throw std::runtime_error("cannot connect to " + store_url + ": " + message);
  }
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  PGresult* r = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(r);
  std::string value, message = PQresultErrorMessage(r);
  if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) value = PQgetvalue(r, 0, 0);
  PQclear(r);
  PQfinish(conn);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
    throw std::runtime_error(sql + ": " + message);
  return value;
}

std::string fresh_store_url(const std::string& base_url) {
  static std::atomic<int> counter{0};
  const std::string schema = "t" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
  sql_value(base_url, "CREATE SCHEMA " + schema);
  const char* sep = base_url.find('?') == std::string::npos ? "?" : "&";
  return base_url + sep + "options=-csearch_path%3D" + schema;
}

std::string store_url_from_env() {
  const char* url = std::getenv("HOLDFAST_TEST_STORE_URL");
  return url == nullptr ? std::string() : std::string(url);
}

}  // namespace holdfast::testing
