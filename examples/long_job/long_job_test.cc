// Runs the long_job example: it holds its key well past three TTLs thanks to background
// renewal (same token throughout, nobody else gets in), and the key is free once it is done.
#include <gtest/gtest.h>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(LongJobExample, RenewsPastThreeTtlsAndFreesTheKeyWhenDone) {
  ServerProcess server;
  const int ttl_ms = 600;
  Child job = Child::start({EXAMPLE_BIN, "--server", server.url(), "--ttl-ms",
                            std::to_string(ttl_ms), "--steps", "8", "--step-ms", "300"});
  std::string line;
  ASSERT_TRUE(job.read_line(&line));
  ASSERT_EQ(line.rfind("holding rebuild:nightly token ", 0), 0u) << line;
  const std::int64_t token = std::stoll(line.substr(line.rfind(' ') + 1));

  auto watcher = server.client();
  const std::int64_t acquired_at =
      watcher.call({"LOCK.STATUS", "rebuild:nightly"}).number("acquiredAt");
  // Step 7 ends 2.1 s in: more than three TTLs.
  for (int step = 1; step <= 7; ++step) {
    ASSERT_TRUE(job.read_line(&line));
    EXPECT_EQ(line, "step " + std::to_string(step) + "/8");
  }
  auto status = watcher.call({"LOCK.STATUS", "rebuild:nightly"});
  EXPECT_EQ(status.number("held"), 1) << status.debug();
  EXPECT_EQ(status.number("token"), token) << "the same grant, renewed";
  EXPECT_GT(status.number("leaseExpiresAt"), acquired_at + 3 * ttl_ms);
  EXPECT_TRUE(watcher.call({"LOCK.TRY", "rebuild:nightly", "TTL", "1000"}).is_null())
      << "nobody else gets in";

  ASSERT_TRUE(job.read_line(&line));
  EXPECT_EQ(line, "step 8/8");
  ASSERT_TRUE(job.read_line(&line));
  EXPECT_EQ(line, "done");
  EXPECT_EQ(job.wait(), 0);
  EXPECT_EQ(watcher.call({"LOCK.STATUS", "rebuild:nightly"}).number("held"), 0)
      << "released when done";
}

}  // namespace
}  // namespace holdfast::testing
