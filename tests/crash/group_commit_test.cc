// Group commit seen from outside: a burst of pipelined acquires costs a handful of fsyncs.
#include <gtest/gtest.h>

#include <regex>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

double metric(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\n" + name + " ([0-9.e+]+)\n"))) return -1;
  return std::stod(m[1]);
}

TEST(GroupCommit, TenThousandPipelinedAcquiresShareAFewSyncs) {
  ServerProcess server({"--fsync", "always"});
  auto metrics = [&] { return run({"curl", "-s", server.http_url() + "/metrics"}).out; };
  double syncs_before = metric(metrics(), "holdfast_wal_syncs_total");
  ASSERT_GE(syncs_before, 0);
  auto c = server.client();
  std::string batch;
  for (int i = 0; i < 10000; ++i)
    batch += RespClient::encode({"LOCK.TRY", "gc:" + std::to_string(i), "TTL", "60000"});
  c.send_raw(batch);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(c.read().text("key"), "gc:" + std::to_string(i));
  std::string after = metrics();
  double syncs = metric(after, "holdfast_wal_syncs_total") - syncs_before;
  double appends = metric(after, "holdfast_store_appends_total");
  EXPECT_GE(appends, 10000);
  EXPECT_GE(syncs, 1);
  EXPECT_LT(syncs, 200) << "10 000 acquires must share syncs (group commit)";
  // And every one of them is durable: they survive kill -9.
  server.kill9();
  server.start();
  auto c2 = server.client();
  EXPECT_EQ(c2.call({"LOCK.STATUS", "gc:0"}).number("held"), 1);
  EXPECT_EQ(c2.call({"LOCK.STATUS", "gc:9999"}).number("held"), 1);
}

}  // namespace
}  // namespace holdfast::testing
