// Real PostgreSQL and MariaDB servers for the sql tests, started through scripts/start-*.sh in
// a fresh mkdtemp folder on free loopback ports, stopped and deleted when the test binary ends.
//
// A test binary registers SqlServersEnvironment (a gtest global Environment) for the servers
// it needs; tests then reach them through SqlServers::postgres_url() / mariadb_port(). Child
// processes started by the tests get the addresses on their command line instead.
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <mysql.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "holdfast/sql/advisory_lock.h"

namespace holdfast::sql::testing {

struct MysqlCloser {
  void operator()(MYSQL* conn) const noexcept { mysql_close(conn); }
};
using MysqlConnection = std::unique_ptr<MYSQL, MysqlCloser>;

// The database the MariaDB tests use (created by the environment).
inline constexpr char kMariaDbDatabase[] = "holdfast_test";

class SqlServers {
 public:
  static const std::string& postgres_url();
  static int mariadb_port();

 private:
  friend class SqlServersEnvironment;
  static std::string& mutable_postgres_url();
  static int& mutable_mariadb_port();
};

class SqlServersEnvironment : public ::testing::Environment {
 public:
  SqlServersEnvironment(bool postgres, bool mariadb) : postgres_(postgres), mariadb_(mariadb) {}
  void SetUp() override;
  void TearDown() override;

 private:
  bool postgres_;
  bool mariadb_;
  std::filesystem::path dir_;
  bool postgres_started_ = false;
  bool mariadb_started_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picked it).
int free_loopback_port();

// Connects or fails the calling test (ADD_FAILURE + throws std::runtime_error).
PgConnection connect_postgres(const std::string& url);
MysqlConnection connect_mariadb(int port, const char* database = kMariaDbDatabase);

// Runs one statement and returns the first value of the first row (nullopt: NULL or no row).
// Throws std::runtime_error with the database's message when the statement fails.
std::optional<std::string> pg_value(PGconn* conn, const std::string& sql);
std::optional<std::string> mysql_value(MYSQL* conn, const std::string& sql);

}  // namespace holdfast::sql::testing
