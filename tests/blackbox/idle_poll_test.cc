// The event loop's time seen from outside: by default it never polls and an idle server, with
// connections open and holds live, sleeps; --idle-poll-us makes it poll between back-to-back
// commands and /metrics counts that time; with --fsync always a chain of changes is written
// and synced by the loop itself before it sleeps, waking no other thread. A node over
// PostgreSQL never polls and has no log.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

double metric(const ServerProcess& server, const std::string& name) {
  auto r = run({"curl", "-s", server.http_url() + "/metrics"});
  std::smatch m;
  const std::regex line("\n" + name + " ([0-9.e+-]+)\n");
  if (!std::regex_search(r.out, m, line)) {
    ADD_FAILURE() << "no " << name << " in /metrics:\n" << r.out;
    return -1;
  }
  return std::stod(m[1]);
}

double poll_seconds(const ServerProcess& server) {
  return metric(server, "holdfast_loop_poll_seconds_total");
}

double syncs_on_loop(const ServerProcess& server) {
  return metric(server, "holdfast_wal_syncs_on_loop_total");
}

double syncs(const ServerProcess& server) { return metric(server, "holdfast_wal_syncs_total"); }

// User plus system CPU time of the process so far, in clock ticks (/proc/PID/stat fields 14, 15).
long cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string skip;
  for (int i = 3; i <= 13; ++i) fields >> skip;
  long utime = 0, stime = 0;
  fields >> utime >> stime;
  return utime + stime;
}

// Voluntary context switches of every thread of the process so far: each is a sleep that
// ended, so a thread woken by a timer while the server idles shows here.
long wake_ups(pid_t pid) {
  long total = 0;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream in(task.path() / "status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) total += std::stol(line.substr(24));
  }
  return total;
}

void ping_back_to_back(const ServerProcess& server, int n) {
  auto c = server.client();
  for (int i = 0; i < n; ++i) ASSERT_EQ(c.call({"PING"}).str, "PONG");
}

// Each waits for its sync before the next is sent: a chain of commits.
void change_back_to_back(const ServerProcess& server, int n) {
  auto c = server.client();
  for (int i = 0; i < n; ++i) {
    ASSERT_FALSE(c.call({"LOCK.ASSIGN", "chain", "worker"}).is_error());
    ASSERT_FALSE(c.call({"LOCK.UNASSIGN", "chain"}).is_error());
  }
}

TEST(IdlePolling, ByDefaultTheLoopNeverPolls) {
  ServerProcess server;
  ping_back_to_back(server, 3000);
  change_back_to_back(server, 200);
  EXPECT_EQ(poll_seconds(server), 0);
}

TEST(IdlePolling, CommandsSentBackToBackAreMetByAPollingLoopWhoseTimeIsCounted) {
  // The widest window (10 ms): the loop polls once work comes back within it, which on a
  // machine busy with other builds a PING's round trip may not do within 100 us.
  ServerProcess server({"--idle-poll-us", "10000"});
  const double before = poll_seconds(server);
  ping_back_to_back(server, 3000);
  const double after = poll_seconds(server);
  if (server.store_url().empty()) {
    EXPECT_GT(after, before) << "the loop never polled between back-to-back commands";
  } else {
    EXPECT_EQ(after, 0) << "a node over PostgreSQL polled";
  }
}

TEST(IdlePolling, AChainOfChangesIsSyncedByTheLoopBeforeItSleeps) {
  if (std::getenv("HOLDFAST_TEST_STORE_URL") != nullptr)
    GTEST_SKIP() << "a node over PostgreSQL has no log of its own";
  ServerProcess server;  // --fsync always, the default
  change_back_to_back(server, 200);
  // Each change waits for its sync before the next is sent, so the loop always has nothing
  // else to do when it goes to sleep: it writes the commit itself.
  EXPECT_GE(syncs(server), 400);
  EXPECT_EQ(syncs_on_loop(server), syncs(server)) << "the log writer was woken for a commit";
}

TEST(IdlePolling, WithFsyncNeverTheLoopNeverSyncs) {
  if (std::getenv("HOLDFAST_TEST_STORE_URL") != nullptr)
    GTEST_SKIP() << "a node over PostgreSQL has no log of its own";
  ServerProcess server({"--fsync", "never"});
  change_back_to_back(server, 200);
  EXPECT_EQ(syncs_on_loop(server), 0);
}

TEST(IdlePolling, AnIdleServerWithOpenConnectionsAndLiveHoldsSleeps) {
  ServerProcess server({"--idle-poll-us", "100"});  // even one that may poll
  ping_back_to_back(server, 3000);                  // the window has grown, if it ever does
  change_back_to_back(server, 200);
  std::vector<RespClient> idle;
  for (int i = 0; i < 50; ++i) {
    idle.push_back(server.client());
    ASSERT_FALSE(
        idle.back().call({"LOCK.TRY", "idle/" + std::to_string(i), "TTL", "600000"}).is_error());
  }

  const double polled = poll_seconds(server);
  const long ticks = cpu_ticks(server.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));  // idle is what is observed
  // Polling is counted in wall time: each scrape of /metrics wakes the loop for one window
  // (100 us), which a busy host (other builds, the other tests) may stretch many times over
  // by preempting it. A loop that kept polling would count the whole 2 s: the bound is a
  // quarter of that, so that no preemption reaches it and a loop that polls does.
  EXPECT_LT(poll_seconds(server) - polled, 0.5);
  // Clock ticks are 10 ms; a loop that kept polling would have used about 200 of them, a
  // sleeping one none but the scrapes' few.
  EXPECT_LE(cpu_ticks(server.pid()) - ticks, 40);
}

// The loop's earliest deadline a value's expiry further off than its timer can count (in
// nanoseconds): such a deadline once fired at once, over and over, and burnt a core.
TEST(IdlePolling, AnExpiryBeyondTheTimersRangeLeavesTheLoopAsleep) {
  ServerProcess server({"--fsync", "never"});
  auto c = server.client();
  ASSERT_EQ(c.call({"HSET", "far", "f", "v"}).integer, 1);
  ASSERT_EQ(c.call({"PEXPIRE", "far", "4611686018427387903"}).integer, 1);
  const long ticks = cpu_ticks(server.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));  // idle is what is observed
  // Clock ticks are 10 ms: a spinning loop takes about 200 in 2 s, a sleeping one none.
  EXPECT_LE(cpu_ticks(server.pid()) - ticks, 40);
  EXPECT_EQ(c.call({"EXISTS", "far"}).integer, 1);
}

TEST(IdlePolling, AnIdleServerWakesNoThreadOnATimer) {
  for (const char* fsync : {"always", "never"}) {
    SCOPED_TRACE(std::string("--fsync ") + fsync);
    ServerProcess server({"--fsync", fsync});
    change_back_to_back(server, 200);  // the log writer has had work, and then none
    auto idle = server.client();
    ASSERT_FALSE(idle.call({"LOCK.TRY", "idle", "TTL", "600000"}).is_error());
    // Wake-ups in the quietest of up to ten 1-second windows: on a machine busy with other
    // builds the tail of the work above (that change written, a node's threads finishing
    // their calls) may reach into the first. A thread on a 10 ms timer would wake about 100
    // times in every window; a few stray wake-ups are allowed (the kernel's, the log's own
    // housekeeping). A node over PostgreSQL has timers by design, each once a second: its
    // heartbeat (on its own thread and connection), its housekeeping tick (a few statements,
    // each a wake-up for the answer) and its LISTEN thread's look at the primary: about ten.
    const long allowed = std::getenv("HOLDFAST_TEST_STORE_URL") != nullptr ? 20 : 10;
    long quietest = 1'000'000;
    for (int window = 0; window < 10 && quietest > allowed; ++window) {
      const long before = wake_ups(server.pid());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      quietest = std::min(quietest, wake_ups(server.pid()) - before);
    }
    EXPECT_LE(quietest, allowed);
  }
}

TEST(IdlePolling, ABadValueIsRefusedWithItsRange) {
  const std::string range = "idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds";
  const std::string how = " (use a whole number of microseconds, or units us, ms, s: 500us, 2ms)";
  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"10001", range},
           {"11ms", range},
           {"-1", "--idle-poll-us: \"-1\" is negative: a duration is 0 or more"},
           {"soon", "--idle-poll-us: \"soon\" is not a duration" + how}}) {
    auto r = run(
        {HOLDFAST_BIN, "serve", "--idle-poll-us", bad, "--listen", "127.0.0.1:0", "--http", ""});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace holdfast::testing
