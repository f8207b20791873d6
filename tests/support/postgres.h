// PostgreSQL for tests that run Holdfast nodes over it (scale-out mode).
//
// TestPostgres starts a throw-away server through scripts/start-postgres.sh in a fresh /tmp
// folder on a free loopback port, and stops and deletes it when destroyed, or when the test
// process is killed (a DeathWatch: pg_ctl detaches the server from the test). With PostgresTls it
// serves TLS only (ssl = on, and a pg_hba.conf that refuses TCP clients without it).
// fresh_store_url() gives each test its own schema in that server, so tests never see each other's
// locks, tokens or rule sets: the URL selects the schema with options=-csearch_path, and the node
// creates its tables there.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/process.h"

typedef struct pg_conn PGconn;  // libpq's, as <libpq-fe.h> declares it

namespace holdfast::testing {

// The server's certificate and key (PEM files; copied, so the originals may go).
struct PostgresTls {
  std::string cert, key;
};

class TestPostgres {
 public:
  TestPostgres();  // throws std::runtime_error when the server does not start
  // A server that takes TCP connections over TLS only: clients need sslmode=require or
  // stronger in their URL (url() has none).
  explicit TestPostgres(const PostgresTls& tls);
  ~TestPostgres();
  TestPostgres(const TestPostgres&) = delete;
  TestPostgres& operator=(const TestPostgres&) = delete;

  const std::string& url() const { return url_; }
  // Stops the server (fast shutdown: connections break) and starts it again on the same
  // folder and port, as a database restart or failover looks to its clients.
  void stop();
  void start_again();

 private:
  void start(const std::vector<std::string>& settings);

  std::string dir_;
  std::string url_;
  int port_ = 0;
  std::vector<std::string> settings_;  // -c settings of start-postgres.sh, kept for start_again
  // Stops the server and removes its folder if the test process is killed before ~TestPostgres.
  std::unique_ptr<DeathWatch> watch_;
};

// Creates a new, empty schema in the database at `base_url` and returns a URL that makes it
// the search path. Throws std::runtime_error when the database cannot be reached.
std::string fresh_store_url(const std::string& base_url);

// One libpq connection, for tests that need a transaction to stay open or a LISTEN.
class SqlSession {
 public:
  explicit SqlSession(const std::string& url);  // throws std::runtime_error
  ~SqlSession();
  SqlSession(const SqlSession&) = delete;
  SqlSession& operator=(const SqlSession&) = delete;

  // Runs one statement; the first column of the first row ("" when none). Throws
  // std::runtime_error with the database's message.
  std::string value(const std::string& sql);
  // The payload of the next notification on a channel this session LISTENs on, or none
  // when none arrived within timeout_ms.
  std::optional<std::string> next_notification(int timeout_ms);

 private:
  PGconn* conn_;
};

// Runs one SQL statement on the schema of `store_url`; returns the first column of the first
// row ("" when none). Throws std::runtime_error with the database's message.
std::string sql_value(const std::string& store_url, const std::string& sql);

// HOLDFAST_TEST_STORE_URL: when set, every ServerProcess runs as a node over PostgreSQL at
// that URL (in a fresh schema), so the black-box suite runs unchanged in scale-out mode.
std::string store_url_from_env();

// The path of one of the project's scripts/ (start-postgres.sh and the others).
std::string project_script(const char* name);

}  // namespace holdfast::testing
