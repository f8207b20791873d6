#include "support/postgres.h"

#include <libpq-fe.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace holdfast::testing {
namespace {

// A throw-away server need not survive a power loss: without fsync its commits cost no disk
// flush, which on a machine busy with builds is most of what starting a node (its schema's
// migrations) and each statement cost. Everything a test does to it (a fast stop, a restart)
// keeps every commit all the same: the data is in the kernel's page cache.
const char* const kNoFsync = "fsync=off";

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string make_dir() {
  std::string pattern = "/tmp/holdfast-pg-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  // mkdtemp makes the folder 0700; the server runs as user 'postgres' when we are root.
  ::chmod(pattern.c_str(), 0755);
  return pattern;
}

}  // namespace

TestPostgres::TestPostgres() { start({}); }

TestPostgres::TestPostgres(const PostgresTls& tls) : dir_(make_dir()) {
  namespace fs = std::filesystem;
  const std::string files = dir_ + "/tls";
  fs::create_directories(files);
  fs::copy_file(tls.cert, files + "/server.crt");
  fs::copy_file(tls.key, files + "/server.key");
  // Local (Unix socket) connections as before; TCP ones only over TLS.
  std::ofstream(files + "/pg_hba.conf") << "local all all trust\n"
                                        << "hostssl all all 127.0.0.1/32 trust\n";
  // PostgreSQL refuses a key others can read, and runs as 'postgres' when we are root.
  ::chmod(files.c_str(), 0755);
  ::chmod((files + "/server.crt").c_str(), 0644);
  ::chmod((files + "/pg_hba.conf").c_str(), 0644);
  ::chmod((files + "/server.key").c_str(), 0600);
  if (::getuid() == 0) {
    if (const passwd* pg = ::getpwnam("postgres"))
      for (const char* f : {"/server.crt", "/server.key", "/pg_hba.conf"})
        if (::chown((files + f).c_str(), pg->pw_uid, pg->pw_gid) != 0)
          throw std::runtime_error("cannot hand " + files + f + " to user postgres");
  }
  start({"ssl=on", "ssl_cert_file=" + files + "/server.crt",
         "ssl_key_file=" + files + "/server.key", "hba_file=" + files + "/pg_hba.conf"});
}

void TestPostgres::start(const std::vector<std::string>& settings) {
  settings_ = settings;
  if (dir_.empty()) dir_ = make_dir();
  std::string errors;
  // A port found free can be taken by someone else before the server binds it: retry.
  for (int attempt = 0; attempt < 3 && url_.empty(); ++attempt) {
    port_ = free_port();
    std::vector<std::string> argv = {project_script("start-postgres.sh"), dir_ + "/pg",
                                     std::to_string(port_), kNoFsync};
    argv.insert(argv.end(), settings_.begin(), settings_.end());
    auto r = run(argv);
    if (r.exit_code == 0) {
      url_ = trim(r.out);
    } else {
      errors += r.err;
    }
  }
  if (url_.empty()) throw std::runtime_error("PostgreSQL did not start: " + errors);
  watch_ = std::make_unique<DeathWatch>(
      shell_command({project_script("stop-postgres.sh"), dir_ + "/pg"}) + "; " +
      shell_command({"rm", "-rf", dir_}));
}

TestPostgres::~TestPostgres() {
  watch_.reset();
  if (!url_.empty()) run({project_script("stop-postgres.sh"), dir_ + "/pg"});
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void TestPostgres::stop() { run({project_script("stop-postgres.sh"), dir_ + "/pg"}); }

void TestPostgres::start_again() {
  std::vector<std::string> argv = {project_script("start-postgres.sh"), dir_ + "/pg",
                                   std::to_string(port_), kNoFsync};
  argv.insert(argv.end(), settings_.begin(), settings_.end());
  auto r = run(argv);
  if (r.exit_code != 0) throw std::runtime_error("PostgreSQL did not start again: " + r.err);
}

SqlSession::SqlSession(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn_);
    PQfinish(conn_);
    throw std::runtime_error("cannot connect to " + url + ": " + message);
  }
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
}

SqlSession::~SqlSession() { PQfinish(conn_); }

std::string SqlSession::value(const std::string& sql) {
  PGresult* r = PQexec(conn_, sql.c_str());
  const ExecStatusType status = PQresultStatus(r);
  std::string value, message = PQresultErrorMessage(r);
  if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) value = PQgetvalue(r, 0, 0);
  PQclear(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
    throw std::runtime_error(sql + ": " + message);
  return value;
}

std::optional<std::string> SqlSession::next_notification(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (PQconsumeInput(conn_) == 0)
      throw std::runtime_error(std::string("connection lost: ") + PQerrorMessage(conn_));
    if (PGnotify* n = PQnotifies(conn_)) {
      std::string payload = n->extra;
      PQfreemem(n);
      return payload;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{PQsocket(conn_), POLLIN, 0};
    ::poll(&pfd, 1, static_cast<int>(left.count()));
  }
}

std::string sql_value(const std::string& store_url, const std::string& sql) {
  return SqlSession(store_url).value(sql);
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

std::string project_script(const char* name) {
  return std::string(HOLDFAST_SOURCE_DIR) + "/scripts/" + name;
}

}  // namespace holdfast::testing
