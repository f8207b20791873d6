// `holdfast locks acquire|run ... --key K --shared-key K` (several keys at once, all or none)
// and `--lock-delay` on acquire, run and assign, against the real server: what is taken and
// printed (human and --json), `acquire --session` of a group, CMD's environment, the
// not-acquired reasons, and the usage errors (exit 2) that take nothing. The server's clock is
// real: short leases, status polled.
#include <gtest/gtest.h>

#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <sstream>
#include <thread>

#include "locks_cli_fixture.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class LocksMultiCli : public LocksCliTest {
 protected:
  std::int64_t held(const std::string& key) {
    return resp.call({"LOCK.STATUS", key}).number("held");
  }
};

TEST_F(LocksMultiCli, AcquireTakesEveryKeyUnderOneHandleAndOneReleaseFreesThemAll) {
  RunResult r = cli({"acquire", "b", "--key", "a", "--shared-key", "c", "--owner", "job-7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The group's lines, then a table of its holds in key order.
  EXPECT_TRUE(contains(r.out, "OWNER    job-7")) << r.out;
  const auto a_row = r.out.find("\na  "), b_row = r.out.find("\nb  "), c_row = r.out.find("\nc  ");
  ASSERT_NE(a_row, std::string::npos) << r.out;
  EXPECT_LT(a_row, b_row);
  EXPECT_LT(b_row, c_row);
  EXPECT_TRUE(contains(r.out.substr(c_row), "shared")) << r.out;
  EXPECT_EQ(held("a"), 1);
  EXPECT_EQ(held("b"), 1);
  EXPECT_EQ(resp.call({"LOCK.STATUS", "c"}).text("mode"), "shared");

  // The printed release line releases the whole group.
  const auto at = r.out.find("release with: holdfast locks release ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream words(r.out.substr(at + 37));
  std::string key, flag, handle;
  words >> key >> flag >> handle;
  EXPECT_EQ(key, "a");
  RunResult released = cli({"release", key, "--handle", handle});
  EXPECT_EQ(released.exit_code, 0) << released.err;
  EXPECT_EQ(held("a"), 0);
  EXPECT_EQ(held("b"), 0);
  EXPECT_EQ(held("c"), 0);
}

TEST_F(LocksMultiCli, JsonIsTheWiresGroup) {
  json::object g = cli_json({"acquire", "y", "--key", "x"}, 0).as_object();
  const std::string handle(g["handle"].as_string());
  ASSERT_EQ(g["holds"].as_array().size(), 2u);
  json::object x = g["holds"].as_array()[0].as_object();
  EXPECT_EQ(x["key"].as_string(), "x");
  EXPECT_EQ(x["handle"].as_string(), handle);
  EXPECT_EQ(x["leaseExpiresAt"].as_int64(), g["leaseExpiresAt"].as_int64());
  EXPECT_EQ(resp.call({"LOCK.STATUS", "x"}).number("token"), x["token"].as_int64());
}

TEST_F(LocksMultiCli, OneHeldKeyMeansNothingIsTakenAndSaysWhy) {
  ASSERT_FALSE(resp.call({"LOCK.TRY", "b", "TTL", "60000", "OWNER", "other"}).is_error());
  RunResult r = cli({"acquire", "a", "--key", "b", "--key", "c"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "not acquired: a is free now; b is held by user:local (owner other)"))
      << r.out;
  EXPECT_EQ(held("a"), 0);
  EXPECT_EQ(held("c"), 0);

  RunResult waited = cli({"acquire", "a", "--key", "b", "--wait", "100"});
  EXPECT_EQ(waited.exit_code, 1);
  EXPECT_TRUE(contains(waited.out, "not acquired: no grant within 100ms; a is free now"))
      << waited.out;
  EXPECT_TRUE(cli_json({"acquire", "a", "--key", "b"}, 1).is_null());
  EXPECT_EQ(held("a"), 0);

  RunResult run_r = run(argv({"run", "a", "--key", "b", "--conflict-exit-code", "9"}, {"true"}));
  EXPECT_EQ(run_r.exit_code, 9);
  EXPECT_TRUE(contains(run_r.err, "true did not run")) << run_r.err;
  EXPECT_EQ(held("a"), 0);
}

TEST_F(LocksMultiCli, RunHoldsEveryKeyWhileTheCommandRunsAndTellsItTheTokens) {
  RunResult r = run(
      argv({"run", "m", "--key", "n", "--shared-key", "o"},
           {"sh", "-c",
            "printf '%s|%s|%s\\n' \"$HOLDFAST_LOCK_KEY\" \"$HOLDFAST_LOCK_HANDLE\" "
            "\"$HOLDFAST_LOCK_TOKEN\"; printf '%s\\n%s\\n' \"$HOLDFAST_LOCK_KEYS\" "
            "\"$HOLDFAST_LOCK_TOKENS\"; " +
                std::string(HOLDFAST_BIN) + " locks status n --json --server " + server.url()}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string first, k1, k2, k3, t1, t2, t3, status;
  std::getline(lines, first);
  std::getline(lines, k1), std::getline(lines, k2), std::getline(lines, k3);
  std::getline(lines, t1), std::getline(lines, t2), std::getline(lines, t3);
  std::getline(lines, status);
  EXPECT_EQ(k1 + k2 + k3, "mno");
  json::object n = json::parse(status).as_object();
  EXPECT_EQ(n["held"].as_bool(), true);
  EXPECT_EQ(std::to_string(n["token"].as_int64()), t2) << "HOLDFAST_LOCK_TOKENS is in key order";
  EXPECT_EQ(first.substr(0, 2), "m|");
  EXPECT_TRUE(first.ends_with("|" + t1)) << first;
  EXPECT_EQ(held("m"), 0) << "released when the command exited";
  EXPECT_EQ(held("n"), 0);
  EXPECT_EQ(held("o"), 0);
}

TEST_F(LocksMultiCli, AcquireSessionHoldsTheGroupUntilInterruptedThenReleasesEveryKey) {
  Child acquire = Child::start(argv({"acquire", "a", "--key", "b", "--session", "--json"}));
  std::string line;
  ASSERT_TRUE(acquire.read_line(&line));
  json::object g = json::parse(line).as_object();
  ASSERT_EQ(g["holds"].as_array().size(), 2u);
  EXPECT_EQ(g["holds"].as_array()[1].as_object().at("scope").as_string(), "session");
  EXPECT_EQ(resp.call({"LOCK.STATUS", "b"}).text("scope"), "session");
  acquire.signal(SIGTERM);
  ASSERT_TRUE(acquire.read_line(&line));
  EXPECT_EQ(line, "{\"released\":true}");
  EXPECT_EQ(acquire.wait(), 0);
  EXPECT_EQ(held("a"), 0);
  EXPECT_EQ(held("b"), 0);
}

TEST_F(LocksMultiCli, RunSendsTheLockDelay) {
  RunResult r =
      run(argv({"run", "job", "--lock-delay", "700"},
               {HOLDFAST_BIN, "locks", "status", "job", "--json", "--server", server.url()}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out).as_object()["lockDelayMs"].as_int64(), 700);
  EXPECT_EQ(held("job"), 0);
  EXPECT_FALSE(resp.call({"LOCK.STATUS", "job"}).has("lockDelayUntil"))
      << "run released the key: a release closes nothing";
}

TEST_F(LocksMultiCli, LockDelayKeepsAnExpiredKeyClosedAndStatusShowsUntilWhen) {
  json::object h =
      cli_json({"acquire", "job", "--ttl", "200", "--lock-delay", "1500"}, 0).as_object();
  EXPECT_EQ(h["lockDelayMs"].as_int64(), 1500);
  const std::int64_t until = h["leaseExpiresAt"].as_int64() + 1500;
  // Poll until the lease has ended, then the key is closed until `until`.
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (held("job") == 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  json::object s = cli_json({"status", "job"}, 0).as_object();
  EXPECT_EQ(s["held"].as_bool(), false);
  EXPECT_EQ(s["lockDelayUntil"].as_int64(), until) << json::serialize(s);
  RunResult human = cli({"status", "job"});
  EXPECT_TRUE(contains(human.out, "CLOSED   by a lock-delay, opens ")) << human.out;
  RunResult refused = cli({"acquire", "job"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.out, "not acquired: job is closed by a lock-delay, opens "))
      << refused.out;

  RunResult shown = cli({"acquire", "other", "--lock-delay", "2000"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(contains(shown.out, "LOCK DELAY  2000 ms")) << shown.out;

  json::object a =
      cli_json({"assign", "turn", "alice", "--ttl", "60000", "--lock-delay", "300"}, 0).as_object();
  EXPECT_EQ(a["lockDelayMs"].as_int64(), 300);
  EXPECT_EQ(resp.call({"LOCK.STATUS", "turn"}).number("lockDelayMs"), 300);
}

TEST_F(LocksMultiCli, BadInputIsAUsageErrorAndTakesNothing) {
  const struct {
    std::vector<std::string> args;
    std::string message;
  } bad[] = {
      {{"acquire", "k", "--key", "k2", "--lock-delay", "10"}, "--lock-delay excludes --key"},
      {{"acquire", "k", "--shared-key", "k2", "--lock-delay", "10"},
       "--lock-delay excludes --shared-key"},
      {{"acquire", "k", "--lock-delay", "-1"}, "--lock-delay: \"-1\" is negative"},
      {{"acquire", "k", "--lock-delay", "soon"}, "--lock-delay: \"soon\" is not a duration"},
      {{"acquire", "k", "--lock-delay", "61s"},
       "INVALID_ARGUMENT lock-delay must be 0 to 60000 milliseconds"},
      {{"acquire", "k", "--lock-delay", "60001"},
       "INVALID_ARGUMENT lock-delay must be 0 to 60000 milliseconds"},
      {{"assign", "k", "alice", "--lock-delay", "60001"}, "INVALID_ARGUMENT lock-delay"},
      {{"acquire", "k", "--key", "k2", "k3"}, "The following argument was not expected: k3"},
      {{"acquire", "k", "--key", "k"}, "INVALID_ARGUMENT"},
      {{"acquire", "k", "--key", "k2", "--take", "2"}, "--take requires --permits"},
      {{"run", "k", "--key", "k2", "--lock-delay", "5", "--", "true"},
       "--lock-delay excludes --key"},
  };
  for (const auto& b : bad) {
    RunResult r = cli(b.args);
    EXPECT_EQ(r.exit_code, 2) << b.message << ": " << r.out << r.err;
    EXPECT_TRUE(contains(r.err, b.message)) << b.message << ": " << r.err;
  }
  EXPECT_EQ(held("k"), 0) << "nothing was taken";
  EXPECT_EQ(held("k2"), 0);
}

}  // namespace
}  // namespace holdfast::testing
