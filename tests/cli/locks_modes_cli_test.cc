// `holdfast locks acquire|run|status|list` with shared and semaphore holds against the real
// server: --shared, --permits N and --take K, what status and list print of such keys (human
// and --json), the not-acquired reasons, and the usage errors of bad combinations (exit 2).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "locks_cli_fixture.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

using LocksModesCli = LocksCliTest;

TEST_F(LocksModesCli, SharedHoldsAndTheirStatus) {
  RunResult first = cli({"acquire", "doc", "--shared", "--owner", "reader-1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(field(first.out, "MODE"), "shared");
  json::object second = cli_json({"acquire", "doc", "--shared"}, 0).as_object();
  EXPECT_EQ(second["mode"].as_string(), "shared");
  EXPECT_FALSE(second.contains("permits"));

  RunResult status = cli({"status", "doc"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(field(status.out, "MODE"), "shared");
  EXPECT_EQ(field(status.out, "HOLDERS"), "2");
  EXPECT_TRUE(contains(status.out, "reader-1")) << status.out;
  EXPECT_EQ(field(status.out, "TOKEN"), std::to_string(second["token"].as_int64()))
      << "the newest hold is shown on top";

  json::object s = cli_json({"status", "doc"}, 0).as_object();
  EXPECT_EQ(s["mode"].as_string(), "shared");
  ASSERT_EQ(s["holders"].as_array().size(), 2u);
  EXPECT_EQ(s["holders"].as_array()[0].as_object().at("owner").as_string(), "reader-1");
  EXPECT_EQ(s["holders"].as_array()[1].as_object().at("mode").as_string(), "shared");
  EXPECT_FALSE(contains(json::serialize(s), second["handle"].as_string().c_str()));

  RunResult writer = cli({"acquire", "doc"});
  EXPECT_EQ(writer.exit_code, 1);
  EXPECT_TRUE(contains(writer.out, "doc is held shared by 2 holds, 0 waiting")) << writer.out;

  RunResult list = cli({"list"});
  EXPECT_TRUE(contains(list.out, "MODE")) << list.out;
  json::object page = cli_json({"list"}, 0).as_object();
  EXPECT_EQ(page["locks"].as_array()[0].as_object().at("mode").as_string(), "shared");
}

TEST_F(LocksModesCli, SemaphorePermits) {
  RunResult two = cli({"acquire", "gpus", "--permits", "3", "--take", "2"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(field(two.out, "MODE"), "semaphore 2 of 3");
  json::object one = cli_json({"acquire", "gpus", "--permits", "3"}, 0).as_object();
  EXPECT_EQ(one["mode"].as_string(), "semaphore");
  EXPECT_EQ(one["take"].as_int64(), 1);
  EXPECT_EQ(one["permits"].as_int64(), 3);

  RunResult status = cli({"status", "gpus"});
  EXPECT_EQ(field(status.out, "MODE"), "semaphore");
  EXPECT_EQ(field(status.out, "PERMITS"), "0 free of 3");
  EXPECT_EQ(field(status.out, "HOLDERS"), "2");
  json::object s = cli_json({"status", "gpus"}, 0).as_object();
  EXPECT_EQ(s["permits"].as_int64(), 3);
  EXPECT_EQ(s["freePermits"].as_int64(), 0);
  EXPECT_EQ(s["holders"].as_array()[0].as_object().at("take").as_int64(), 2);

  RunResult full = cli({"acquire", "gpus", "--permits", "3", "--wait", "50"});
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_TRUE(contains(full.out, "gpus is a semaphore of 3 permits, 0 free, 2 holds, 0 waiting"))
      << full.out;

  RunResult mismatch = cli({"acquire", "gpus", "--permits", "4"});
  EXPECT_EQ(mismatch.exit_code, 2) << "INVALID_ARGUMENT from the server";
  EXPECT_TRUE(contains(mismatch.err, "the key is a semaphore of 3 permits, not 4")) << mismatch.err;
  RunResult shared = cli({"acquire", "gpus", "--shared"});
  EXPECT_EQ(shared.exit_code, 2) << shared.err;
}

TEST_F(LocksModesCli, BadCombinationsAreUsageErrorsAndTakeNothing) {
  const struct {
    std::vector<std::string> args;
    std::string message;
  } bad[] = {
      {{"acquire", "k", "--take", "2"}, "--take requires --permits"},
      {{"acquire", "k", "--shared", "--permits", "2"}, "--shared excludes --permits"},
      {{"acquire", "k", "--permits", "0"}, "--permits: 0 is below 1"},
      {{"acquire", "k", "--permits", "two"}, "--permits: 'two' is not a whole number of permits"},
      {{"acquire", "k", "--permits", "2", "--take", "0"}, "--take: 0 is below 1"},
      {{"acquire", "k", "--permits", "2", "--take", "3"}, "INVALID_ARGUMENT"},
      {{"acquire", "k", "--permits", "2000000"}, "INVALID_ARGUMENT"},
      {{"run", "k", "--take", "1", "--", "true"}, "--take requires --permits"},
  };
  for (const auto& b : bad) {
    RunResult r = cli(b.args);
    EXPECT_EQ(r.exit_code, 2) << b.message;
    EXPECT_TRUE(contains(r.err, b.message)) << b.message << ": " << r.err;
  }
  EXPECT_EQ(resp.call({"LOCK.STATUS", "k"}).number("held"), 0) << "nothing was taken";
}

TEST_F(LocksModesCli, RunHoldsItsModeWhileTheCommandRuns) {
  // A shared run beside a shared hold: the command sees two holders.
  auto reader = resp.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  RunResult r = run(argv({"run", "doc", "--shared"}, {HOLDFAST_BIN, "locks", "status", "doc",
                                                      "--json", "--server", server.url()}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json::object s = json::parse(r.out).as_object();
  EXPECT_EQ(s["mode"].as_string(), "shared");
  EXPECT_EQ(s["holders"].as_array().size(), 2u);
  EXPECT_EQ(resp.call({"LOCK.STATUS", "doc"}).number("token"), reader.number("token"))
      << "the run's hold is released, the other reader's stays";

  r = run(argv({"run", "pool", "--permits", "4", "--take", "3"},
               {HOLDFAST_BIN, "locks", "status", "pool", "--json", "--server", server.url()}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  s = json::parse(r.out).as_object();
  EXPECT_EQ(s["freePermits"].as_int64(), 1);
  EXPECT_EQ(resp.call({"LOCK.STATUS", "pool"}).number("held"), 0);

  // An exclusive run does not start beside a reader.
  const std::string marker = dir.path() + "/ran";
  r = run(argv({"run", "doc"}, {"touch", marker}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::ifstream(marker).good());
}

}  // namespace
}  // namespace holdfast::testing
