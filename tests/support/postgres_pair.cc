#include "support/postgres_pair.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "core/text.h"
#include "support/postgres.h"
#include "support/process.h"
#include "support/wall_time.h"

namespace holdfast::testing {
namespace {

namespace fs = std::filesystem;

// The newest installed server's programs, as scripts/start-postgres.sh finds them.
std::string server_bin(const std::string& program) {
  std::string newest;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = entry.path().string() + "/bin";
    if (fs::exists(bin + "/" + program) && bin > newest) newest = bin;
  }
  if (newest.empty()) throw std::runtime_error(program + ": PostgreSQL server binaries not found");
  return newest + "/" + program;
}

// PostgreSQL refuses to run as root: its programs run as 'postgres' then.
std::vector<std::string> as_postgres(std::vector<std::string> argv) {
  if (::getuid() == 0) argv.insert(argv.begin(), {"runuser", "-u", "postgres", "--"});
  return argv;
}

void check(const RunResult& r, const std::string& what) {
  if (r.exit_code != 0) throw std::runtime_error(what + " failed: " + r.err + r.out);
}

pid_t parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  // pid (comm) state ppid ...; comm may hold spaces, so read after its closing parenthesis.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  char state = 0;
  pid_t parent = 0;
  if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &parent) != 2) return 0;
  return parent;
}

}  // namespace

PostgresPair::PostgresPair(bool synchronous) : synchronous_(synchronous) {
  std::string pattern = "/tmp/holdfast-pair-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = pattern;
  ::chmod(root_.c_str(), 0755);  // the servers run as 'postgres' when we are root
  // A server may be frozen (SIGSTOP) when the test dies: its processes (the postmaster's
  // children, by /proc) go on first, then it stops at once.
  std::string script;
  for (int server : {0, 1}) {
    const std::string data = dir(server) + "/data";
    script += "p=$(head -n 1 " + shell_quoted(data + "/postmaster.pid") +
              " 2>/dev/null) && { kill -CONT $p $(awk -v p=\"$p\" '$4 == p { print $1 }' "
              "/proc/[0-9]*/stat 2>/dev/null); " +
              shell_command(as_postgres({server_bin("pg_ctl"), "-D", data, "-m", "immediate", "-w",
                                         "-t", "60", "stop"})) +
              " >/dev/null 2>&1; }; ";
  }
  watch_ = std::make_unique<DeathWatch>(script + shell_command({"rm", "-rf", root_}));
  std::string errors;
  for (int attempt = 0; attempt < 3 && ports_[0] == 0; ++attempt) {
    const int port = free_port();
    auto r = run(
        {project_script("start-postgres.sh"), dir(0), std::to_string(port), "cluster_name=hf0"});
    if (r.exit_code == 0) {
      ports_[0] = port;
    } else {
      errors += r.err;
    }
  }
  if (ports_[0] == 0) throw std::runtime_error("the primary did not start: " + errors);
  for (int attempt = 0; attempt < 3 && ports_[1] == 0; ++attempt) {
    const int port = free_port();
    if (port == ports_[0]) continue;
    auto r = run({project_script("start-postgres-standby.sh"), dir(1), std::to_string(port),
                  std::to_string(ports_[0]), "hf1"});
    if (r.exit_code == 0) {
      ports_[1] = port;
    } else {
      errors += r.err;
    }
  }
  if (ports_[1] == 0) throw std::runtime_error("the standby did not start: " + errors);
  if (synchronous_) {
    sql(0, "ALTER SYSTEM SET synchronous_standby_names = 'hf1'");
    sql(0, "SELECT pg_reload_conf()");
  }
  wait_for_standby();
}

PostgresPair::~PostgresPair() {
  watch_.reset();
  for (int server : {0, 1}) {
    if (processes(server).empty()) continue;
    signal(server, SIGCONT);
    run(as_postgres({server_bin("pg_ctl"), "-D", dir(server) + "/data", "-m", "immediate", "-w",
                     "-t", "60", "stop"}));
  }
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

std::string PostgresPair::dir(int server) const { return root_ + "/s" + std::to_string(server); }

std::string PostgresPair::url(int server) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(ports_[server]) + "/postgres";
}

std::string PostgresPair::multi_host_url() const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(ports_[0]) +
         ",127.0.0.1:" + std::to_string(ports_[1]) + "/postgres?target_session_attrs=read-write";
}

std::string PostgresPair::sql(int server, const std::string& statement) const {
  return SqlSession(url(server) + "?connect_timeout=10").value(statement);
}

std::vector<pid_t> PostgresPair::processes(int server) const {
  std::ifstream pidfile(dir(server) + "/data/postmaster.pid");
  pid_t postmaster = 0;
  if (!(pidfile >> postmaster) || postmaster <= 0 || ::kill(postmaster, 0) != 0) return {};
  std::vector<pid_t> out{postmaster};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(name.c_str()));
    if (parent_of(pid) == postmaster) out.push_back(pid);
  }
  return out;
}

void PostgresPair::signal(int server, int sig) const {
  // The postmaster first, so it forks nothing the list below would miss.
  const std::vector<pid_t> pids = processes(server);
  if (pids.empty()) return;
  ::kill(pids.front(), sig);
  for (pid_t pid : processes(server)) ::kill(pid, sig);
}

void PostgresPair::stop_primary_immediate() const {
  check(run(as_postgres({server_bin("pg_ctl"), "-D", dir(primary_) + "/data", "-m", "immediate",
                         "-w", "-t", "60", "stop"})),
        "pg_ctl stop -m immediate");
}

void PostgresPair::freeze_walsender() const {
  const std::string pids =
      sql(primary_, "SELECT string_agg(pid::text, ' ') FROM pg_stat_replication");
  std::size_t at = 0;
  while (at < pids.size()) {
    const std::size_t end = pids.find(' ', at);
    const std::string one =
        pids.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!one.empty()) ::kill(static_cast<pid_t>(std::atoi(one.c_str())), SIGSTOP);
    if (end == std::string::npos) break;
    at = end + 1;
  }
}

void PostgresPair::promote_standby() {
  const int next = standby();
  check(run(as_postgres(
            {server_bin("pg_ctl"), "-D", dir(next) + "/data", "-w", "-t", "60", "promote"})),
        "pg_ctl promote");
  primary_ = next;
}

void PostgresPair::rebuild_standby() {
  const int old = standby();
  // Whatever it is doing (frozen, a second primary, stopped), it goes.
  signal(old, SIGKILL);
  for (int i = 0; i < 500 && !processes(old).empty(); ++i) pause_ms(10);
  if (!processes(old).empty())
    throw std::runtime_error("the old primary's processes did not exit after SIGKILL");
  const std::string name = "hf" + std::to_string(old);
  check(run({project_script("start-postgres-standby.sh"), dir(old), std::to_string(ports_[old]),
             std::to_string(ports_[primary_]), name}),
        "start-postgres-standby.sh");
  if (synchronous_) {
    sql(primary_, "ALTER SYSTEM SET synchronous_standby_names = '" + name + "'");
    sql(primary_, "SELECT pg_reload_conf()");
  }
  wait_for_standby();
}

void PostgresPair::wait_for_standby() const {
  const std::string want = synchronous_ ? "sync" : "async";
  const std::string query =
      "SELECT sync_state FROM pg_stat_replication WHERE application_name = "
      "'hf" +
      std::to_string(standby()) + "' AND state = 'streaming'";
  for (int i = 0; i < 600; ++i) {
    if (sql(primary_, query) == want) return;
    pause_ms(100);
  }
  throw std::runtime_error("the standby hf" + std::to_string(standby()) + " did not reach the " +
                           want + " state within 60 s");
}

}  // namespace holdfast::testing
