// A full disk under the real server: its data dir is a small tmpfs that a filler file has
// filled. The server must stay up, refuse changes with STORE_UNAVAILABLE, keep answering
// reads, report the fault on /readyz and /metrics and in one log line, come back by itself
// once the filler is deleted (the grants that were waiting for the log are then answered),
// and after a kill -9 and a restart hold every grant it ever answered.
//
// Needs root (mount); skipped with the reason otherwise.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

struct Grant {
  std::string handle;
  std::int64_t token = 0;
};

class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("HOLDFAST_TEST_STORE_URL") != nullptr)
      GTEST_SKIP() << "a node over PostgreSQL has no log of its own to fill";
    if (::mount("tmpfs", mount_.path().c_str(), "tmpfs", 0, "size=3m") != 0)
      GTEST_SKIP() << "cannot mount a small tmpfs for the data dir (needs root): "
                   << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    server_.reset();
    if (mounted_) ::umount2(mount_.path().c_str(), MNT_DETACH);
  }

  std::string data_dir() const { return mount_.path() + "/data"; }
  std::string filler() const { return mount_.path() + "/filler"; }

  // Writes the filler until the file system is full; returns its size.
  std::size_t fill() {
    std::ofstream out(filler(), std::ios::binary);
    const std::string chunk(4096, 'x');
    std::size_t written = 0;
    while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size())) && out.flush())
      written += chunk.size();
    return written;
  }

  std::string http(const std::string& path) {
    return run({"curl", "-s", "-i", server_->http_url() + path}).out;
  }

  TempDir mount_;
  bool mounted_ = false;
  std::unique_ptr<ServerProcess> server_;
};

// A lock's state as LOCK.STATUS tells it: its token, 0 when free.
std::int64_t token_of(RespClient& client, const std::string& key) {
  const RespValue status = client.call({"LOCK.STATUS", key});
  return status.number("held") == 1 ? status.number("token") : 0;
}

TEST_F(DiskFullTest, RefusesChangesServesReadsRecoversAndLosesNothing) {
  server_ = std::make_unique<ServerProcess>(std::vector<std::string>{}, data_dir());
  ASSERT_GT(fill(), 0u);
  const std::string owner(200, 'o');  // bigger records fill the log sooner
  std::map<std::string, Grant> answered;
  // Connections whose acquire was accepted but not answered: it waits for the log.
  std::vector<std::pair<std::string, RespClient>> waiting;

  auto client = server_->client();
  std::optional<RespValue> refusal;
  for (int i = 0; i < 20'000 && !refusal; ++i) {
    const std::string key = "full/" + std::to_string(i);
    client.send({"LOCK.TRY", key, "TTL", "600000", "OWNER", owner});
    RespValue reply;
    try {
      reply = client.read(/*timeout_ms=*/500);
    } catch (const std::exception&) {
      // No answer: this grant is waiting for the log; go on with a new connection.
      waiting.emplace_back(key, std::move(client));
      client = server_->client();
      continue;
    }
    if (reply.is_error()) {
      refusal = reply;
      break;
    }
    ASSERT_FALSE(reply.is_null()) << key;
    answered[key] = Grant{reply.text("handle"), reply.number("token")};
  }
  ASSERT_TRUE(refusal.has_value()) << "the disk never filled";
  EXPECT_EQ(refusal->error_code(), "STORE_UNAVAILABLE") << refusal->str;
  EXPECT_NE(refusal->str.find("No space left on device"), std::string::npos) << refusal->str;
  ASSERT_GT(answered.size(), 100u);

  // Still up: reads answer, changes are refused and change nothing.
  auto reader = server_->client();
  const auto& [first_key, first] = *answered.begin();
  EXPECT_EQ(token_of(reader, first_key), first.token);
  EXPECT_EQ(reader.call({"LOCK.RELEASE", first_key, first.handle}).error_code(),
            "STORE_UNAVAILABLE");
  EXPECT_EQ(reader.call({"LOCK.RENEW", first_key, first.handle, "TTL", "600000"}).error_code(),
            "STORE_UNAVAILABLE");
  EXPECT_EQ(token_of(reader, first_key), first.token);
  EXPECT_EQ(reader.call({"PING"}).str, "PONG");
  const std::string readyz = http("/readyz");
  EXPECT_NE(readyz.find("503"), std::string::npos) << readyz;
  EXPECT_NE(readyz.find("STORE_UNAVAILABLE"), std::string::npos) << readyz;
  EXPECT_NE(readyz.find("Retry-After: 1"), std::string::npos) << readyz;
  EXPECT_NE(http("/metrics").find("holdfast_store_unavailable 1"), std::string::npos);
  const std::string refused =
      run({"curl", "-s", "-i", "-X", "POST", server_->http_url() + "/v1/locks/try-acquire", "-d",
           R"({"key":"over-http","ttlMs":60000})"})
          .out;
  EXPECT_NE(refused.find("503"), std::string::npos) << refused;
  EXPECT_NE(refused.find("\"errorCode\":\"STORE_UNAVAILABLE\""), std::string::npos) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;
  EXPECT_EQ(token_of(reader, "over-http"), 0);

  // Space comes back: without a restart, new grants succeed (once the retry schedule comes
  // round).
  ASSERT_EQ(::unlink(filler().c_str()), 0) << std::strerror(errno);
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  std::optional<RespValue> granted;
  while (!granted && std::chrono::steady_clock::now() < deadline) {
    RespValue r = reader.call({"LOCK.TRY", "after", "TTL", "600000"});
    if (!r.is_error()) granted = r;
  }
  ASSERT_TRUE(granted.has_value()) << "no grant ever after freeing space";
  answered["after"] = Grant{granted->text("handle"), granted->number("token")};
  // The grants that waited for the log are answered now, as grants.
  for (auto& [key, connection] : waiting) {
    const RespValue reply = connection.read();
    ASSERT_FALSE(reply.is_error()) << key << ": " << reply.str;
    answered[key] = Grant{reply.text("handle"), reply.number("token")};
  }
  EXPECT_NE(http("/readyz").find("200 OK"), std::string::npos);
  const std::string metrics = http("/metrics");
  EXPECT_NE(metrics.find("holdfast_store_unavailable 0"), std::string::npos);
  EXPECT_NE(metrics.find("holdfast_store_faults_total 1"), std::string::npos);
  const std::string log = server_->drain_output();
  std::size_t started = 0, ended = 0;
  for (std::size_t at = 0; (at = log.find("refusing changes", at)) != std::string::npos; ++at)
    ++started;
  for (std::size_t at = 0; (at = log.find("accepting changes again", at)) != std::string::npos;
       ++at)
    ++ended;
  EXPECT_EQ(started, 1u) << log;
  EXPECT_EQ(ended, 1u) << log;

  // kill -9 and restart on the same file system: every answered grant is there.
  server_->kill9();
  server_->start();
  auto after = server_->client();
  for (const auto& [key, grant] : answered) ASSERT_EQ(token_of(after, key), grant.token) << key;
  EXPECT_EQ(after.call({"LOCK.RELEASE", first_key, first.handle}).number("released"), 1);
}

}  // namespace
}  // namespace holdfast::testing
