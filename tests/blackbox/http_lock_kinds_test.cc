// Shared locks and semaphores over HTTP (docs/lock-kinds.md, docs/http.md): the same modes,
// fields and errors as over RESP, on the embedded server and on a node over PostgreSQL.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "support/curl_json.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class HttpLockKinds : public ::testing::Test {
 protected:
  ServerProcess server;

  HttpReply post(const std::string& path, const std::string& body) {
    return curl_json({"-X", "POST", server.http_url() + path, "--data-binary", "@-"}, body);
  }
  HttpReply get(const std::string& path) { return curl_json({server.http_url() + path}); }
};

TEST_F(HttpLockKinds, SharedHoldsAndTheirStatus) {
  auto a = post("/v1/locks/try-acquire", R"({"key":"doc","ttlMs":60000,"mode":"shared"})");
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body.at("handle").at("mode").as_string(), "shared");
  auto b =
      post("/v1/locks/acquire", R"({"key":"doc","ttlMs":60000,"timeoutMs":0,"mode":"SHARED"})");
  ASSERT_EQ(b.status, 200) << b.raw;
  auto x = post("/v1/locks/try-acquire", R"({"key":"doc","ttlMs":60000})");
  EXPECT_TRUE(x.body.at("handle").is_null()) << x.raw;
  auto s = get("/v1/locks/status?key=doc");
  ASSERT_EQ(s.status, 200) << s.raw;
  EXPECT_EQ(s.body.at("mode").as_string(), "shared");
  EXPECT_EQ(s.body.at("holders").as_array().size(), 2u);
  auto released = post("/v1/locks/release",
                       R"({"key":"doc","handle":")" +
                           std::string(a.body.at("handle").at("handle").as_string()) + R"("})");
  EXPECT_EQ(released.status, 200) << released.raw;
  auto after = get("/v1/locks/status?key=doc");
  EXPECT_EQ(after.body.at("holders").as_array().size(), 1u) << after.raw;
}

TEST_F(HttpLockKinds, SemaphorePermitsAndErrors) {
  auto bad = post("/v1/locks/try-acquire", R"({"key":"pool","ttlMs":1000,"take":2})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.raw.find("take needs permits"), std::string::npos) << bad.raw;
  auto zero = post("/v1/locks/try-acquire", R"({"key":"pool","ttlMs":1000,"permits":0})");
  EXPECT_NE(zero.raw.find("permits must be a positive integer"), std::string::npos) << zero.raw;
  auto a = post("/v1/locks/try-acquire", R"({"key":"pool","ttlMs":60000,"permits":3,"take":2})");
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body.at("handle").at("take").as_int64(), 2);
  EXPECT_EQ(a.body.at("handle").at("permits").as_int64(), 3);
  auto s = get("/v1/locks/status?key=pool");
  EXPECT_EQ(s.body.at("freePermits").as_int64(), 1) << s.raw;
  auto other = post("/v1/locks/try-acquire", R"({"key":"pool","ttlMs":60000,"permits":4})");
  EXPECT_EQ(other.status, 400);
  EXPECT_NE(other.raw.find("semaphore of 3 permits, not 4"), std::string::npos) << other.raw;
}

}  // namespace
}  // namespace holdfast::testing
