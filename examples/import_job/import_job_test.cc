// Runs the import_job example against a real server: two runs at once, one skips; once the
// first is done, a new run imports again.
#include <gtest/gtest.h>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(ImportJobExample, TwoRunsAtOnceOneSkips) {
  ServerProcess server;
  Child first = Child::start(
      {EXAMPLE_BIN, "--server", server.url(), "--user", "user-7", "--work-ms", "3000"});
  std::string line;
  ASSERT_TRUE(first.read_line(&line));
  EXPECT_EQ(line.rfind("started import of user-7 with fencing token ", 0), 0u) << line;

  RunResult second = run({EXAMPLE_BIN, "--server", server.url(), "--user", "user-7"});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out,
            "skipped: an import of user-7 is already running (portfolio-import:user-7 is held)\n");

  RunResult other_user =
      run({EXAMPLE_BIN, "--server", server.url(), "--user", "user-8", "--work-ms", "10"});
  EXPECT_NE(other_user.out.find("imported user-8"), std::string::npos)
      << "other users are not blocked";

  ASSERT_TRUE(first.read_line(&line));
  EXPECT_EQ(line, "imported user-7");
  EXPECT_EQ(first.wait(), 0);

  RunResult again =
      run({EXAMPLE_BIN, "--server", server.url(), "--user", "user-7", "--work-ms", "10"});
  EXPECT_NE(again.out.find("imported user-7"), std::string::npos) << again.out << again.err;
}

}  // namespace
}  // namespace holdfast::testing
