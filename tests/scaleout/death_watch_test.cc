// A test process that is killed (a ctest timeout, a crash) must not leave its PostgreSQL
// servers running: pg_ctl starts them in a session of their own, out of reach of the signals
// that end the test's own children. TestPostgres and PostgresPair leave a DeathWatch behind
// them (support/process.h). Checked from outside: a child run of this binary starts a server
// and a pair (one of them frozen) and is killed with SIGKILL; every process of those servers
// must then go, and their ports must refuse connections.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "support/loopback.h"
#include "support/postgres.h"
#include "support/postgres_pair.h"
#include "support/process.h"

namespace holdfast::testing {
namespace {

constexpr char kChildEnv[] = "HOLDFAST_DEATH_WATCH_CHILD";

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// When process `pid` started (field 22 of /proc/PID/stat), or none when there is no such
// process: a pid and its start time name one process, even if the pid is used again.
std::optional<std::string> started(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return field;
}

bool refuses(int port) {
  const int fd = tcp_connect(port);
  if (fd < 0) return true;
  ::close(fd);
  return false;
}

// Runs only as the child of the test below (it skips otherwise): starts the servers, says
// where they are, and waits to be killed.
TEST(DeathWatchChild, StartsServersAndWaitsToBeKilled) {
  if (std::getenv(kChildEnv) == nullptr) GTEST_SKIP() << "the child of DeathWatch.*";
  TestPostgres single;
  PostgresPair pair;
  const std::string url = single.url();
  const int single_port = std::stoi(url.substr(url.rfind(':') + 1));
  // The two postmasters first; then their children, of which some come and go on their own (an
  // autovacuum worker, a backend).
  const std::vector<pid_t> first = pair.processes(0), second = pair.processes(1);
  if (first.empty() || second.empty()) GTEST_FAIL() << "the pair is not running";
  std::vector<pid_t> pids = {first[0], second[0]};
  pids.insert(pids.end(), first.begin() + 1, first.end());
  pids.insert(pids.end(), second.begin() + 1, second.end());
  pair.freeze_primary();  // a frozen server must go too
  std::cout << "ready " << single_port << " " << pair.port(0) << " " << pair.port(1);
  for (pid_t p : pids) std::cout << " " << p;
  std::cout << std::endl;
  for (;;) ::pause();
}

TEST(DeathWatch, TheServersOfAKilledTestStop) {
  Child child = Child::start({"/proc/self/exe", "--gtest_filter=DeathWatchChild.*"}, false,
                             {std::string(kChildEnv) + "=1"});
  std::string line;
  // A pair takes a base backup: long on a busy machine, still far under any limit.
  while (child.read_line(&line, 4 * kEventuallyMs) && !line.starts_with("ready ")) {
  }
  ASSERT_TRUE(line.starts_with("ready ")) << "the child did not start its servers: " << line;
  std::istringstream in(line.substr(6));
  std::vector<int> ports(3);
  in >> ports[0] >> ports[1] >> ports[2];
  std::vector<pid_t> pids;
  for (pid_t p; in >> p;) pids.push_back(p);
  ASSERT_GE(pids.size(), 2u);
  for (int port : {ports[0], ports[2]}) EXPECT_FALSE(refuses(port)) << port << " not serving";
  for (std::size_t i = 0; i < 2; ++i) ASSERT_TRUE(alive(pids[i])) << "postmaster " << pids[i];
  // Those still running now: a child that ended meanwhile is gone already.
  std::vector<std::pair<pid_t, std::string>> running;
  for (pid_t p : pids)
    if (auto at = started(p)) running.emplace_back(p, *at);
  ASSERT_GE(running.size(), 2u) << "no start time read for the postmasters";
  auto still_runs = [](const std::pair<pid_t, std::string>& p) {
    return started(p.first) == p.second;
  };

  child.signal(SIGKILL);
  child.wait();

  const auto until = std::chrono::steady_clock::now() + kEventually;
  auto gone = [&] {
    for (const auto& p : running)
      if (still_runs(p)) return false;
    for (int port : ports)
      if (!refuses(port)) return false;
    return true;
  };
  while (!gone() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (const auto& p : running)
    EXPECT_FALSE(still_runs(p)) << "process " << p.first << " of the pair still runs";
  for (int port : ports) EXPECT_TRUE(refuses(port)) << "port " << port << " still serves";
}

}  // namespace
}  // namespace holdfast::testing
