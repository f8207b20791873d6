// A throw-away PostgreSQL server: see postgres_server.h.
#include "postgres_server.h"

#include <libpq-fe.h>
#include <signal.h>

#include <fstream>
#include <stdexcept>

#include "../net.h"
#include "../process.h"

namespace holdfast::bench {

void PostgresServer::start(const std::filesystem::path& dir) {
  dir_ = dir;
  port_ = free_loopback_port();
  std::string output;
  const int rc = run_command(
      {(scripts_dir_ / "start-postgres.sh").string(), dir_.string(), std::to_string(port_)},
      output);
  if (rc != 0) throw std::runtime_error("start-postgres.sh failed: " + output);
  std::ifstream pidfile(dir_ / "data" / "postmaster.pid");
  long pid = 0;
  if (!(pidfile >> pid) || pid <= 0)
    throw std::runtime_error("no postmaster.pid in " + dir_.string());
  pid_ = static_cast<pid_t>(pid);
  // SIGQUIT is PostgreSQL's immediate shutdown: what a second Ctrl-C should do.
  register_pid(pid_, SIGQUIT);
  PGconn* conn = PQconnectdb(conninfo().c_str());
  if (PQstatus(conn) == CONNECTION_OK) {
    if (const char* v = PQparameterStatus(conn, "server_version")) version_ = v;
  }
  PQfinish(conn);
}

void PostgresServer::stop() {
  if (pid_ <= 0) return;
  // SIGINT is the "fast" shutdown: roll back sessions, checkpoint, exit.
  if (!signal_and_wait(pid_, SIGINT, std::chrono::seconds(30))) {
    signal_and_wait(pid_, SIGKILL, std::chrono::seconds(5));
  }
  unregister_pid(pid_);
  pid_ = -1;
}

std::string PostgresServer::url() const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/postgres";
}

std::string PostgresServer::conninfo() const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=postgres";
}

}  // namespace holdfast::bench
