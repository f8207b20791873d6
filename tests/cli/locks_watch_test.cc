// `holdfast locks watch [PREFIX]` against the real server: one line per lock event, for people
// or as the event's JSON (--json), only for keys with the prefix; a server it cannot reach is
// exit code 4.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class LocksWatch : public ::testing::Test {
 protected:
  ServerProcess server;
  RespClient c = server.client();

  Child watch(std::vector<std::string> extra) {
    std::vector<std::string> argv = {HOLDFAST_BIN, "locks", "watch"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("--server");
    argv.push_back(server.url());
    return Child::start(argv);
  }
  // Takes `key` until `child` printed a line (its watch may still be starting).
  std::string line_after_taking(Child& child, const std::string& key) {
    std::string line;
    for (int attempt = 0; attempt < 50 && line.empty(); ++attempt) {
      auto r = c.call({"LOCK.TRY", key + std::to_string(attempt), "TTL", "60000"});
      EXPECT_FALSE(r.is_null());
      child.read_line(&line, 200);
    }
    return line;
  }
};

TEST_F(LocksWatch, PrintsAJsonLinePerEventOfThePrefix) {
  Child w = watch({"jobs:", "--json"});
  c.call({"LOCK.TRY", "other", "TTL", "60000"});
  const std::string line = line_after_taking(w, "jobs:");
  ASSERT_FALSE(line.empty());
  const json::object e = json::parse(line).as_object();
  EXPECT_EQ(e.at("event").as_string(), "acquired");
  EXPECT_TRUE(std::string(e.at("key").as_string()).starts_with("jobs:"));
  EXPECT_EQ(e.at("heldBy").as_string(), "user:local");
  EXPECT_TRUE(e.contains("token") && e.contains("leaseExpiresAt") && e.contains("at"));
  w.signal(SIGTERM);
  w.wait();
}

TEST_F(LocksWatch, PrintsALineForPeople) {
  Child w = watch({});
  const std::string line = line_after_taking(w, "k");
  EXPECT_NE(line.find(" acquired k"), std::string::npos) << line;
  EXPECT_NE(line.find("heldBy=user:local"), std::string::npos) << line;
  EXPECT_NE(line.find("lease=60.0s"), std::string::npos) << line;
  w.signal(SIGTERM);
  w.wait();
}

TEST(LocksWatchUnreachable, ExitsWithFour) {
  const auto r =
      run({HOLDFAST_BIN, "locks", "watch", "--server", "127.0.0.1:" + std::to_string(free_port())});
  EXPECT_EQ(r.exit_code, 4) << r.err;
}

}  // namespace
}  // namespace holdfast::testing
