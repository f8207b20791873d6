// Starts and stops the test servers; see sql_servers.h.
#include "sql_servers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <stdexcept>

namespace holdfast::sql::testing {
namespace {

// Runs a shell command, returns its trimmed stdout, or nullopt when it exits non-zero.
std::optional<std::string> run_script(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  std::array<char, 512> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) out += buffer.data();
  if (pclose(pipe) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string script(const char* name) { return std::string(HOLDFAST_SCRIPTS_DIR) + "/" + name; }

}  // namespace

std::string& SqlServers::mutable_postgres_url() {
  static std::string url;
  return url;
}
int& SqlServers::mutable_mariadb_port() {
  static int port = 0;
  return port;
}
const std::string& SqlServers::postgres_url() { return mutable_postgres_url(); }
int SqlServers::mariadb_port() { return mutable_mariadb_port(); }

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

void SqlServersEnvironment::SetUp() {
  // The MariaDB client library must be initialised before threads use it.
  mysql_library_init(0, nullptr, nullptr);
  std::string pattern = "/tmp/holdfast-sql-XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  dir_ = pattern;
  // mkdtemp makes the folder 0700; the server runs as user 'postgres' when we are root.
  std::filesystem::permissions(
      dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                std::filesystem::perms::others_exec);
  // A port found free can be taken by someone else before the server binds it: retry.
  for (int attempt = 0; postgres_ && !postgres_started_ && attempt < 3; ++attempt) {
    const int port = free_loopback_port();
    const auto url = run_script(script("start-postgres.sh") + " " + (dir_ / "pg").string() + " " +
                                std::to_string(port));
    if (url) {
      SqlServers::mutable_postgres_url() = *url;
      postgres_started_ = true;
    }
  }
  ASSERT_EQ(postgres_started_, postgres_) << "PostgreSQL did not start (see " << dir_ << ")";
  for (int attempt = 0; mariadb_ && !mariadb_started_ && attempt < 3; ++attempt) {
    const int port = free_loopback_port();
    if (run_script(script("start-mariadb.sh") + " " + (dir_ / "mariadb").string() + " " +
                   std::to_string(port))) {
      SqlServers::mutable_mariadb_port() = port;
      mariadb_started_ = true;
    }
  }
  ASSERT_EQ(mariadb_started_, mariadb_) << "MariaDB did not start (see " << dir_ << ")";
  if (mariadb_) {
    MysqlConnection root = connect_mariadb(SqlServers::mariadb_port(), nullptr);
    mysql_value(root.get(), std::string("CREATE DATABASE IF NOT EXISTS ") + kMariaDbDatabase);
  }
}

void SqlServersEnvironment::TearDown() {
  if (postgres_started_) run_script(script("stop-postgres.sh") + " " + (dir_ / "pg").string());
  if (mariadb_started_) run_script(script("stop-mariadb.sh") + " " + (dir_ / "mariadb").string());
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  mysql_library_end();
}

PgConnection connect_postgres(const std::string& url) {
  try {
    PgConnection conn(url);
    // Expected NOTICEs and WARNINGs (e.g. "you don't own a lock") would only clutter the log.
    PQsetNoticeProcessor(
        conn.get(), [](void*, const char*) {}, nullptr);
    return conn;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    throw;
  }
}

MysqlConnection connect_mariadb(int port, const char* database) {
  MysqlConnection conn(mysql_init(nullptr));
  mysql_options(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (mysql_real_connect(conn.get(), "127.0.0.1", "root", "", database, static_cast<unsigned>(port),
                         nullptr, 0) == nullptr) {
    const std::string message = mysql_error(conn.get());
    ADD_FAILURE() << "MariaDB connect failed: " << message;
    throw std::runtime_error(message);
  }
  return conn;
}

std::optional<std::string> pg_value(PGconn* conn, const std::string& sql) {
  PGresult* r = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    const std::string message = PQresultErrorMessage(r);
    PQclear(r);
    throw std::runtime_error(sql + ": " + message);
  }
  std::optional<std::string> value;
  if (status == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0)) {
    value = PQgetvalue(r, 0, 0);
  }
  PQclear(r);
  return value;
}

std::optional<std::string> mysql_value(MYSQL* conn, const std::string& sql) {
  if (mysql_real_query(conn, sql.data(), sql.size()) != 0) {
    throw std::runtime_error(sql + ": " + mysql_error(conn));
  }
  MYSQL_RES* result = mysql_store_result(conn);
  if (result == nullptr) {
    if (mysql_field_count(conn) == 0) return std::nullopt;
    throw std::runtime_error(sql + ": " + mysql_error(conn));
  }
  std::optional<std::string> value;
  if (MYSQL_ROW row = mysql_fetch_row(result); row != nullptr && row[0] != nullptr) {
    value = std::string(row[0], mysql_fetch_lengths(result)[0]);
  }
  mysql_free_result(result);
  return value;
}

}  // namespace holdfast::sql::testing
