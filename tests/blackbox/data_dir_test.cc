// The data dir belongs to one server at a time; what it holds survives a clean restart too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <thread>

#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(DataDir, ASecondServerOnTheSameDataDirRefusesToStart) {
  ServerProcess first;
  auto r = run({HOLDFAST_BIN, "serve", "--data-dir", first.data_dir(), "--listen", "127.0.0.1:0",
                "--http", "", "--unix", first.data_dir() + "/second.sock"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is in use by another holdfast server"), std::string::npos) << r.err;
  EXPECT_EQ(first.client().call({"PING"}).str, "PONG");
}

TEST(DataDir, HoldsSurviveAGracefulRestartWithTheirHandlesAndTokens) {
  ServerProcess server;
  auto hold = server.client().call({"LOCK.TRY", "k", "TTL", "600000", "OWNER", "run-1"});
  EXPECT_EQ(server.stop(), 0);
  server.start();
  auto c = server.client();
  auto status = c.call({"LOCK.STATUS", "k"});
  EXPECT_EQ(status.number("token"), hold.number("token"));
  EXPECT_EQ(status.text("owner"), "run-1");
  EXPECT_EQ(status.number("leaseExpiresAt"), hold.number("leaseExpiresAt"));
  EXPECT_GT(c.call({"LOCK.TRY", "other", "TTL", "1000"}).number("token"), hold.number("token"));
  EXPECT_EQ(c.call({"LOCK.RELEASE", "k", hold.text("handle")}).number("released"), 1);
}

// Bytes in the regular files under `dir` (the log and snapshots).
std::uintmax_t bytes_in(const std::string& dir) {
  std::uintmax_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

// With --fsync never the log writer writes what the loop handed it within 10 ms, without
// being woken: an idle server must not sit on a change, and a kill -9 after that keeps it.
TEST(DataDir, WithFsyncNeverAChangeReachesTheLogWhileTheServerIdlesAndSurvivesAKill9) {
  for (const char* poll : {"100", "0"}) {  // both loops: polling, and io_context::run
    SCOPED_TRACE(std::string("--idle-poll-us ") + poll);
    ServerProcess server({"--fsync", "never", "--idle-poll-us", poll});
    auto c = server.client();
    const std::uintmax_t before = bytes_in(server.data_dir());
    auto hold = c.call({"LOCK.TRY", "k", "TTL", "600000"});
    if (server.store_url().empty()) {  // over PostgreSQL the answered change is committed there
      const auto deadline = std::chrono::steady_clock::now() + kEventually;
      while (bytes_in(server.data_dir()) == before && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_GT(bytes_in(server.data_dir()), before) << "the change never reached the log";
    }
    server.kill9();
    server.start();
    auto status = server.client().call({"LOCK.STATUS", "k"});
    EXPECT_EQ(status.number("held"), 1);
    EXPECT_EQ(status.number("token"), hold.number("token"));
  }
}

TEST(DataDir, SessionHoldsDoNotSurviveARestart) {
  ServerProcess server;
  auto c = server.client();
  c.call({"LOCK.TRY", "s", "TTL", "600000", "SESSION"});
  server.kill9();
  server.start();
  EXPECT_EQ(server.client().call({"LOCK.STATUS", "s"}).number("held"), 0);
}

}  // namespace
}  // namespace holdfast::testing
