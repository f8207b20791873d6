// A node over a PostgreSQL that does not replicate synchronously (here: one server, no
// synchronous_standby_names) warns in its log, on /readyz, in INFO and in a metric, and with
// --require-sync-replication refuses to start.
#include <gtest/gtest.h>
#include <signal.h>

#include "support/postgres.h"
#include "support/process.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

TEST(AsyncReplication, IsReportedEverywhereAndRefusedWhenRequired) {
  TestPostgres pg;
  const std::string url = fresh_store_url(pg.url());
  {
    ServerProcess node({"--store", url});
    const std::string ready = http_get(node, "/readyz");
    EXPECT_NE(ready.find("200 OK"), std::string::npos) << ready;
    EXPECT_NE(ready.find("\"replication\":\"asynchronous\""), std::string::npos) << ready;
    EXPECT_NE(ready.find("synchronous_standby_names is empty"), std::string::npos) << ready;
    EXPECT_NE(http_get(node, "/metrics").find("\nholdfast_store_sync_replication 0\n"),
              std::string::npos);
    const RespValue info = node.client().call({"INFO", "holdfast"});
    EXPECT_NE(info.str.find("store_replication:asynchronous\r\n"), std::string::npos) << info.str;
    // It serves.
    EXPECT_FALSE(node.client().call({"LOCK.TRY", "k", "TTL", "1000"}).is_error());
  }
  {
    // The warning is logged as the node starts, before its ready line.
    TempDir data;
    Child node = Child::start({HOLDFAST_BIN, "serve", "--store", url, "--data-dir", data.path(),
                               "--listen", "127.0.0.1:0", "--http", ""},
                              /*capture_stderr=*/true);
    std::string line, log;
    while (node.read_line(&line, 30'000) && line.rfind("holdfast ready", 0) != 0)
      log += line + "\n";
    node.signal(SIGTERM);
    EXPECT_EQ(node.wait(), 0);
    EXPECT_NE(log.find("warn the database does not replicate synchronously: "
                       "synchronous_standby_names is empty"),
              std::string::npos)
        << log;
  }
  TempDir data;
  const RunResult refused =
      run({HOLDFAST_BIN, "serve", "--store", url, "--data-dir", data.path(), "--listen",
           "127.0.0.1:0", "--http", "", "--require-sync-replication"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("requireSyncReplication is on"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace holdfast::testing
