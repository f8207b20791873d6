// `holdfast locks run KEY -- CMD` and `holdfast locks acquire KEY --session` against the real
// server: the lock is held while the command runs (seen from inside and from outside), renewed
// past its TTL, released after; the command's status passes through; a failed acquire runs
// nothing; signals sent to holdfast reach the command and the lock is still released.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "locks_cli_fixture.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;
using std::chrono::steady_clock;

class LocksRun : public LocksCliTest {
 protected:
  // A shell command as CMD.
  static std::vector<std::string> sh(const std::string& script) { return {"sh", "-c", script}; }

  // A FIFO the command blocks on until the test writes a line to it: the test decides when
  // the command ends, with no sleeping on either side.
  std::string make_fifo(const std::string& name) {
    std::string path = dir.path() + "/" + name;
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  static void open_gate(const std::string& fifo) { std::ofstream(fifo) << "go\n"; }

  bool held(const std::string& key) { return resp.call({"LOCK.STATUS", key}).number("held") == 1; }
  // Polls LOCK.STATUS until `key` is free; false if it never is.
  bool await_free(const std::string& key) {
    const auto deadline = steady_clock::now() + kEventually;
    while (steady_clock::now() < deadline)
      if (!held(key)) return true;
    return false;
  }
  // Reads the child's stdout until a line starting with `prefix`; everything read goes to *seen.
  static bool await_line(Child& child, const std::string& prefix, std::string* seen) {
    std::string line;
    while (child.read_line(&line)) {
      *seen += line + "\n";
      if (line.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
};

TEST_F(LocksRun, TheLockIsHeldWhileTheCommandRunsAndReleasedAfter) {
  const std::string gate = make_fifo("gate");
  Child locked =
      Child::start(argv({"run", "jobs:nightly", "--ttl", "60000"},
                        sh("echo \"running token=$HOLDFAST_LOCK_TOKEN\"; read x < " + gate)));
  std::string seen;
  ASSERT_TRUE(await_line(locked, "running", &seen)) << seen;
  // From outside, while the command runs: held, and by the token the command was given.
  RespValue status = resp.call({"LOCK.STATUS", "jobs:nightly"});
  EXPECT_EQ(status.number("held"), 1) << status.debug();
  EXPECT_EQ(seen, "running token=" + std::to_string(status.number("token")) + "\n");
  EXPECT_EQ(status.text("scope"), "lease");
  open_gate(gate);
  EXPECT_EQ(locked.wait(), 0);
  EXPECT_FALSE(held("jobs:nightly")) << "released as soon as the command exited";
}

TEST_F(LocksRun, TheCommandSeesItsOwnHoldThroughTheCli) {
  // From inside: the command asks the server itself.
  RunResult r = run(argv({"run", "k", "--owner", "run-7"}, {HOLDFAST_BIN, "locks", "status", "k",
                                                            "--json", "--server", server.url()}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json::object status = json::parse(r.out).as_object();
  EXPECT_EQ(status["held"].as_bool(), true);
  EXPECT_EQ(status["owner"].as_string(), "run-7");
  EXPECT_FALSE(held("k"));
}

TEST_F(LocksRun, TheLeaseIsRenewedWhileTheCommandOutlivesItsTtl) {
  const std::string gate = make_fifo("gate");
  Child locked =
      Child::start(argv({"run", "long", "--ttl", "1500"}, sh("echo running; read x < " + gate)));
  std::string seen;
  ASSERT_TRUE(await_line(locked, "running", &seen)) << seen;
  const RespValue first = resp.call({"LOCK.STATUS", "long"});
  // Renewed until the lease ends a whole TTL after the first one did: by then it would have
  // ended without renewals. (A TTL of 1.5 s: it renews every 500 ms, and a machine busy with
  // other builds may keep it off the CPU for a few hundred.)
  for (;;) {
    RespValue s = resp.call({"LOCK.STATUS", "long"});
    ASSERT_EQ(s.number("held"), 1) << s.debug();
    ASSERT_EQ(s.number("token"), first.number("token")) << "the same grant, renewed";
    if (s.number("leaseExpiresAt") >= first.number("leaseExpiresAt") + 1500) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  open_gate(gate);
  EXPECT_EQ(locked.wait(), 0);
  EXPECT_FALSE(held("long"));
}

TEST_F(LocksRun, TheCommandsExitStatusPassesThrough) {
  EXPECT_EQ(run(argv({"run", "k"}, sh("exit 7"))).exit_code, 7);
  EXPECT_EQ(run(argv({"run", "k"}, {"false"})).exit_code, 1);
  // Died of a signal: 128 + its number, as shells report it.
  RunResult killed = run(argv({"run", "k"}, sh("kill -TERM $$")));
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM) << killed.err;
  EXPECT_FALSE(held("k"));
  // Its output is its own.
  RunResult echoed = run(argv({"run", "k"}, {"echo", "hello", "--not-a-holdfast-flag"}));
  EXPECT_EQ(echoed.exit_code, 0);
  EXPECT_EQ(echoed.out, "hello --not-a-holdfast-flag\n");
  EXPECT_EQ(echoed.err, "");
}

TEST_F(LocksRun, AFailedAcquireRunsNothingAndExitsOne) {
  const std::string marker = dir.path() + "/ran";
  ASSERT_FALSE(resp.call({"LOCK.TRY", "busy", "TTL", "60000", "OWNER", "other"}).is_null());
  RunResult r = run(argv({"run", "busy"}, sh("touch " + marker)));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(
      r.err.find("holdfast locks run: not acquired: busy is held by user:local (owner other)"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("sh did not run"), std::string::npos) << r.err;
  // Waiting in the queue, and a code of the caller's choosing.
  r = run(
      argv({"run", "busy", "--wait", "100", "--conflict-exit-code", "75"}, sh("touch " + marker)));
  EXPECT_EQ(r.exit_code, 75) << r.err;
  EXPECT_NE(r.err.find("not acquired: no grant within 100ms; busy is held"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command must not run";
}

TEST_F(LocksRun, AWaitSaysOnceOnStderrWhoHoldsTheKeyThenRuns) {
  const RespValue hold = resp.call({"LOCK.TRY", "busy", "TTL", "60000", "OWNER", "run-17"});
  // stderr and stdout in one pipe, in the order written.
  Child locked = Child::start(argv({"run", "busy", "--wait", "10m"}, sh("echo running")), true);
  std::string seen;
  ASSERT_TRUE(await_line(locked,
                         "holdfast locks run: waiting up to 10m: busy is held by user:local "
                         "(owner run-17), expires in ",
                         &seen))
      << seen;
  ASSERT_TRUE(await_waiters(resp, "busy", 1));
  EXPECT_EQ(resp.call({"LOCK.RELEASE", "busy", hold.text("handle")}).number("released"), 1);
  ASSERT_TRUE(await_line(locked, "running", &seen)) << seen;
  EXPECT_EQ(locked.wait(), 0);
  EXPECT_EQ(seen.find("waiting"), seen.rfind("waiting")) << "said once:\n" << seen;

  RunResult free = run(argv({"run", "free", "--wait", "10m"}, sh("echo ran")));
  EXPECT_EQ(free.exit_code, 0) << free.err;
  EXPECT_EQ(free.out, "ran\n");
  EXPECT_EQ(free.err, "") << "a free key is taken without a word";
}

TEST_F(LocksRun, AcquireSessionWithWaitSaysWhoHoldsTheKey) {
  const RespValue hold = resp.call({"LOCK.TRY", "busy", "TTL", "60000"});
  Child acquire = Child::start(argv({"acquire", "busy", "--session", "--wait", "1m"}), true);
  std::string seen;
  ASSERT_TRUE(
      await_line(acquire, "holdfast locks: waiting up to 1m: busy is held by user:local", &seen))
      << seen;
  ASSERT_TRUE(await_waiters(resp, "busy", 1));
  resp.call({"LOCK.RELEASE", "busy", hold.text("handle")});
  ASSERT_TRUE(await_line(acquire, "holding busy", &seen)) << seen;
  acquire.signal(SIGTERM);
  ASSERT_TRUE(await_line(acquire, "released busy", &seen)) << seen;
  EXPECT_EQ(acquire.wait(), 0);
}

TEST_F(LocksRun, OtherFailuresHaveTheirOwnCodesAndRunNothing) {
  const std::string marker = dir.path() + "/ran";
  RunResult unreachable = run({HOLDFAST_BIN, "locks", "run", "k", "--server",
                               "127.0.0.1:" + std::to_string(free_port()), "--", "touch", marker});
  EXPECT_EQ(unreachable.exit_code, 4) << unreachable.err;
  RunResult bad_key = run(argv({"run", std::string("bad\x01key")}, {"touch", marker}));
  EXPECT_EQ(bad_key.exit_code, 2) << bad_key.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
  RunResult no_command = run(argv({"run", "k"}));
  EXPECT_EQ(no_command.exit_code, 2) << no_command.err;
  RunResult not_found = run(argv({"run", "k"}, {"/nonexistent/program"}));
  EXPECT_EQ(not_found.exit_code, 127);
  EXPECT_NE(not_found.err.find("cannot run /nonexistent/program: No such file or directory"),
            std::string::npos)
      << not_found.err;
  EXPECT_FALSE(held("k")) << "released although the command never started";
}

class LocksRunSignal : public LocksRun, public ::testing::WithParamInterface<int> {};

TEST_P(LocksRunSignal, ASignalToHoldfastReachesTheCommandAndTheLockIsReleased) {
  const int sig = GetParam();
  const std::string name = sig == SIGINT ? "INT" : "TERM";
  // The command reports the signal and exits 3; `wait` returns as soon as a trapped signal comes.
  // The sleep does not hold the test's output open: were it ever left behind, the test runner
  // would wait for it.
  Child locked = Child::start(
      argv({"run", "k"}, sh("trap 'kill $pid; echo got " + name + "; exit 3' " + name +
                            "; sleep 600 >/dev/null 2>&1 & pid=$!; echo running; wait $pid")));
  std::string seen;
  ASSERT_TRUE(await_line(locked, "running", &seen)) << seen;
  ASSERT_TRUE(held("k"));
  locked.signal(sig);
  ASSERT_TRUE(await_line(locked, "got " + name, &seen)) << seen;
  EXPECT_EQ(locked.wait(), 3) << "the command's status";
  EXPECT_FALSE(held("k"));
}

INSTANTIATE_TEST_SUITE_P(IntAndTerm, LocksRunSignal, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& info) {
                           return info.param == SIGINT ? "SIGINT" : "SIGTERM";
                         });

TEST_F(LocksRun, ASignalWhileWaitingForTheKeyLeavesTheQueueAndRunsNothing) {
  const std::string marker = dir.path() + "/ran";
  ASSERT_FALSE(resp.call({"LOCK.TRY", "busy", "TTL", "60000"}).is_null());
  Child locked = Child::start(argv({"run", "busy", "--wait", "60000"}, {"touch", marker}));
  ASSERT_TRUE(await_waiters(resp, "busy", 1));
  locked.signal(SIGTERM);
  EXPECT_EQ(locked.wait(), 128 + SIGTERM);
  EXPECT_TRUE(await_waiters(resp, "busy", 0)) << "the waiter left the queue";
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(LocksRun, ASessionRunIsASessionHold) {
  const std::string gate = make_fifo("gate");
  Child locked =
      Child::start(argv({"run", "k", "--session"}, sh("echo running; read x < " + gate)));
  std::string seen;
  ASSERT_TRUE(await_line(locked, "running", &seen)) << seen;
  EXPECT_EQ(resp.call({"LOCK.STATUS", "k"}).text("scope"), "session");
  // holdfast dies without releasing: the server frees a session hold with its connection.
  locked.signal(SIGKILL);
  locked.wait();
  EXPECT_TRUE(await_free("k"));
  open_gate(gate);  // the orphaned command ends too
}

TEST_F(LocksRun, AcquireSessionHoldsUntilInterruptedThenReleases) {
  Child acquire = Child::start(argv({"acquire", "k", "--session", "--ttl", "1500"}));
  std::string seen;
  ASSERT_TRUE(await_line(acquire, "holding k", &seen)) << seen;
  EXPECT_NE(seen.find("SCOPE    session"), std::string::npos) << seen;
  RespValue status = resp.call({"LOCK.STATUS", "k"});
  EXPECT_EQ(status.text("scope"), "session") << status.debug();
  // Renewed past its TTL while the command waits: held until the lease ends a whole TTL after
  // the first one did.
  for (;;) {
    RespValue s = resp.call({"LOCK.STATUS", "k"});
    ASSERT_EQ(s.number("held"), 1) << s.debug();
    ASSERT_EQ(s.number("token"), status.number("token"));
    if (s.number("leaseExpiresAt") >= status.number("leaseExpiresAt") + 1500) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  acquire.signal(SIGINT);
  ASSERT_TRUE(await_line(acquire, "released k", &seen)) << seen;
  EXPECT_EQ(acquire.wait(), 0);
  EXPECT_FALSE(held("k"));
}

TEST_F(LocksRun, AcquireSessionJsonPrintsTheHoldThenTheRelease) {
  Child acquire = Child::start(argv({"acquire", "k", "--session", "--json"}));
  std::string line;
  ASSERT_TRUE(acquire.read_line(&line));
  json::object hold = json::parse(line).as_object();
  EXPECT_EQ(hold["key"].as_string(), "k");
  EXPECT_EQ(hold["scope"].as_string(), "session");
  EXPECT_EQ(resp.call({"LOCK.STATUS", "k"}).number("token"), hold["token"].as_int64());
  acquire.signal(SIGTERM);
  ASSERT_TRUE(acquire.read_line(&line));
  EXPECT_EQ(line, "{\"released\":true}");
  EXPECT_EQ(acquire.wait(), 0);
}

TEST_F(LocksRun, AcquireSessionOnAHeldKeyIsNotAcquired) {
  ASSERT_FALSE(resp.call({"LOCK.TRY", "busy", "TTL", "60000"}).is_null());
  RunResult r = run(argv({"acquire", "busy", "--session"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("not acquired: busy is held by user:local", 0), 0u) << r.out;
  r = run(argv({"acquire", "busy", "--session", "--wait", "50", "--json"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(json::parse(r.out).as_object()["errorCode"].as_string(), "LOCK_TIMEOUT") << r.out;
}

}  // namespace
}  // namespace holdfast::testing
