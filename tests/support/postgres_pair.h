// A PostgreSQL primary and a standby on loopback, for failover tests, set up the standard way
// an HA agent (Patroni, pg_auto_failover) keeps them: the standby is a pg_basebackup -R copy
// streaming from the primary, and the primary's synchronous_standby_names names it, so every
// commit waits for it. The test then plays the agent: it breaks the primary, promotes the
// standby (which starts alone, not waiting for a standby of its own), and rebuilds the old
// primary as the new primary's synchronous standby.
//
// Servers are numbered 0 and 1; server 0 starts as the primary. Scripts: start-postgres.sh,
// start-postgres-standby.sh, stop-postgres.sh; the servers' folders are removed at the end,
// also when the test process is killed (a DeathWatch).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "support/process.h"

namespace holdfast::testing {

class PostgresPair {
 public:
  // synchronous false: the primary does not wait for the standby (asynchronous replication),
  // the unsafe set-up that failover tests show losing grants.
  explicit PostgresPair(bool synchronous = true);  // throws std::runtime_error
  ~PostgresPair();
  PostgresPair(const PostgresPair&) = delete;
  PostgresPair& operator=(const PostgresPair&) = delete;

  int port(int server) const { return ports_[server]; }
  int primary() const { return primary_; }
  int standby() const { return 1 - primary_; }
  // One server: postgresql://postgres@127.0.0.1:PORT/postgres.
  std::string url(int server) const;
  // Both, in libpq's multi-host form, server 0 first, with target_session_attrs=read-write.
  std::string multi_host_url() const;

  // Runs one statement on a server as the superuser; the first column of the first row.
  std::string sql(int server, const std::string& statement) const;
  // The server's processes, postmaster first (none when it is not running).
  std::vector<pid_t> processes(int server) const;
  void signal(int server, int sig) const;  // to every process of the server, postmaster first

  // Faults on the primary: every process stopped (SIGSTOP), stopped at once without a
  // checkpoint (pg_ctl stop -m immediate), killed (kill -9).
  void freeze_primary() const { signal(primary_, 19 /* SIGSTOP */); }
  void stop_primary_immediate() const;
  void kill9_primary() const { signal(primary_, 9 /* SIGKILL */); }
  // The walsender of the primary stopped (SIGSTOP): its commits no longer reach the standby.
  void freeze_walsender() const;

  // The standby becomes the primary (pg_ctl promote, waiting until it is); primary() moves.
  void promote_standby();
  // The old primary, whatever state it is in (frozen, stopped, killed), is thrown away and
  // made a fresh standby of the primary; with synchronous replication the primary waits for
  // it again once it streams.
  void rebuild_standby();

 private:
  std::string dir(int server) const;
  void wait_for_standby() const;

  bool synchronous_;
  std::string root_;
  // Stops both servers (stopped ones first let go on) and removes root_ if the test process is
  // killed before ~PostgresPair.
  std::unique_ptr<DeathWatch> watch_;
  int ports_[2] = {0, 0};
  int primary_ = 0;
};

}  // namespace holdfast::testing
