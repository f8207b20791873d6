// A throw-away PostgreSQL server for the targets that need one (the advisory-lock peer and
// the Holdfast scale-out nodes): scripts/start-postgres.sh in a folder on a free loopback
// port, registered with the harness so a second Ctrl-C stops it, stopped with the fast
// shutdown. Each target starts its own, so no target measures on a database another one
// loaded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace holdfast::bench {

class PostgresServer {
 public:
  explicit PostgresServer(std::filesystem::path scripts_dir)
      : scripts_dir_(std::move(scripts_dir)) {}
  ~PostgresServer() { stop(); }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Starts the server with its cluster in `dir`. Throws std::runtime_error on failure.
  void start(const std::filesystem::path& dir);
  void stop();  // idempotent

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& version() const { return version_; }
  // postgresql://postgres@127.0.0.1:PORT/postgres
  std::string url() const;
  // libpq key=value form of url().
  std::string conninfo() const;

 private:
  std::filesystem::path scripts_dir_;
  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::string version_;
};

}  // namespace holdfast::bench
