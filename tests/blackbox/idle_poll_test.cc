// Idle polling (--idle-poll-us; src/core/idle_poll.h) seen from outside: commands sent back to
// back are met by a polling loop, and changes made back to back with --fsync always by a
// polling log writer, whose times /metrics counts; an idle server sleeps; --idle-poll-us 0 and
// a node over PostgreSQL never poll, and the log writer does not with --fsync never.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

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

double writer_poll_seconds(const ServerProcess& server) {
  return metric(server, "holdfast_wal_writer_poll_seconds_total");
}

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

TEST(IdlePolling, CommandsSentBackToBackAreMetByAPollingLoopWhoseTimeIsCounted) {
  ServerProcess server;
  const double before = poll_seconds(server);
  ping_back_to_back(server, 3000);
  const double after = poll_seconds(server);
  if (server.store_url().empty()) {
    EXPECT_GT(after, before) << "the loop never polled between back-to-back commands";
  } else {
    EXPECT_EQ(after, 0) << "a node over PostgreSQL polled";
  }
}

TEST(IdlePolling, ChangesMadeBackToBackAreMetByAPollingLogWriterWhoseTimeIsCounted) {
  ServerProcess server;  // --fsync always, the default
  const double before = writer_poll_seconds(server);
  change_back_to_back(server, 500);
  const double after = writer_poll_seconds(server);
  if (server.store_url().empty()) {
    EXPECT_GT(after, before) << "the log writer never polled between commits";
  } else {
    EXPECT_EQ(after, 0) << "a node over PostgreSQL has no log writer";
  }
}

TEST(IdlePolling, WithFsyncNeverTheLogWriterDoesNotPoll) {
  ServerProcess server({"--fsync", "never"});
  change_back_to_back(server, 500);
  EXPECT_EQ(writer_poll_seconds(server), 0);
}

TEST(IdlePolling, AnIdleServerSleeps) {
  ServerProcess server;
  ping_back_to_back(server, 3000);  // the windows have grown, if they ever do
  change_back_to_back(server, 500);
  const double polled = poll_seconds(server);
  const double writer_polled = writer_poll_seconds(server);
  const long ticks = cpu_ticks(server.pid());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // idle is what is observed
  EXPECT_LT(poll_seconds(server) - polled, 0.005);
  EXPECT_LT(writer_poll_seconds(server) - writer_polled, 0.005);
  // Clock ticks are 10 ms; a loop that kept polling would have used about 50 of them.
  EXPECT_LE(cpu_ticks(server.pid()) - ticks, 5);
}

TEST(IdlePolling, ZeroTurnsItOff) {
  ServerProcess server({"--idle-poll-us", "0"});
  ping_back_to_back(server, 3000);
  change_back_to_back(server, 500);
  EXPECT_EQ(poll_seconds(server), 0);
  EXPECT_EQ(writer_poll_seconds(server), 0);
}

TEST(IdlePolling, ABadValueIsRefusedWithItsRange) {
  for (const char* bad : {"-1", "10001", "soon"}) {
    auto r = run(
        {HOLDFAST_BIN, "serve", "--idle-poll-us", bad, "--listen", "127.0.0.1:0", "--http", ""});
    EXPECT_EQ(r.exit_code, 2) << bad;
    if (std::string(bad) != "soon") {
      EXPECT_NE(r.err.find("idlePollUs (--idle-poll-us) must be from 0 to 10000 microseconds"),
                std::string::npos)
          << r.err;
    }
  }
}

}  // namespace
}  // namespace holdfast::testing
