// The HTTP/JSON API with curl against the real server: every route, every error status, the
// malformed-input cases, blocking and disconnects, concurrent transfers, and /metrics.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <signal.h>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "support/curl_json.h"
#include "support/loopback.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

using Reply = HttpReply;

class HttpApi : public ::testing::Test {
 protected:
  ServerProcess server;

  Reply curl(const std::string& method, const std::string& path, const std::string& body = "",
             std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"-X", method, server.http_url() + path};
    if (!body.empty()) args.insert(args.end(), {"--data-binary", "@-"});
    args.insert(args.end(), extra.begin(), extra.end());
    return curl_json(std::move(args), body);
  }
  Reply post(const std::string& path, const std::string& body) { return curl("POST", path, body); }
  static std::string str(const json::value& v, const char* name) {
    return std::string(v.at(name).as_string());
  }
};

TEST_F(HttpApi, AcquireTryRenewReleaseStatusList) {
  auto a = post("/v1/locks/acquire",
                R"({"key":"jobs:1","ttlMs":60000,"timeoutMs":1000,"owner":"run-1"})");
  ASSERT_EQ(a.status, 200) << a.raw;
  const auto& hold = a.body.at("handle");
  for (const char* f : {"key", "handle", "token", "heldBy", "owner", "acquiredAt", "leaseExpiresAt",
                        "scope", "kind"})
    EXPECT_TRUE(hold.as_object().contains(f)) << f;
  EXPECT_TRUE(hold.at("token").is_int64() || hold.at("token").is_uint64());
  EXPECT_EQ(str(hold, "acquiredAt").size(), 24u);  // 2026-11-30T13:10:59.349Z
  EXPECT_EQ(str(hold, "acquiredAt").back(), 'Z');
  std::string handle = str(hold, "handle");

  auto t = post("/v1/locks/try-acquire", R"({"key":"jobs:1","ttlMs":1000})");
  EXPECT_EQ(t.status, 200);
  EXPECT_TRUE(t.body.at("handle").is_null());

  auto s = curl("GET", "/v1/locks/status?key=jobs%3A1");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.body.at("held"), true);
  EXPECT_EQ(str(s.body, "owner"), "run-1");
  EXPECT_FALSE(s.body.as_object().contains("handle"));

  auto r =
      post("/v1/locks/renew", R"({"key":"jobs:1","handle":")" + handle + R"(","ttlMs":90000})");
  EXPECT_EQ(r.body.at("renewed"), true);
  EXPECT_TRUE(r.body.at("leaseExpiresAt").is_string());
  auto bad_renew = post("/v1/locks/renew",
                        R"({"key":"jobs:1","handle":"0000000000000000000000000A","ttlMs":90000})");
  EXPECT_EQ(bad_renew.body.at("renewed"), false);
  EXPECT_EQ(str(bad_renew.body, "reason"), "lease_lost");

  auto l = curl("GET", "/v1/locks?match=jobs:*&count=10");
  EXPECT_EQ(l.status, 200);
  EXPECT_EQ(l.body.at("locks").as_array().size(), 1u);
  EXPECT_EQ(str(l.body, "nextCursor"), "0");

  auto rel = post("/v1/locks/release", R"({"key":"jobs:1","handle":")" + handle + R"("})");
  EXPECT_EQ(rel.body.at("released"), true);
  auto again = post("/v1/locks/release", R"({"key":"jobs:1","handle":")" + handle + R"("})");
  EXPECT_EQ(again.body.at("released"), false);
  EXPECT_EQ(str(again.body, "reason"), "not_holder");
  EXPECT_EQ(curl("GET", "/v1/locks/status?key=jobs:1").body.at("held"), false);
}

TEST_F(HttpApi, ABlockingAcquireWaitsOnTheServerAndEndsIn409) {
  auto first = post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":60000})");
  auto timeout = post("/v1/locks/acquire", R"({"key":"k","ttlMs":1000,"timeoutMs":150})");
  EXPECT_EQ(timeout.status, 409);
  EXPECT_EQ(str(timeout.body, "errorCode"), "LOCK_TIMEOUT");
  EXPECT_EQ(str(timeout.body.at("details"), "key"), "k");
  EXPECT_EQ(timeout.body.at("details").at("timeoutMs"), 150);

  Reply granted;
  std::thread waiter([&] {
    granted = post("/v1/locks/acquire", R"({"key":"k","ttlMs":1000,"timeoutMs":10000})");
  });
  auto resp = server.client();
  ASSERT_TRUE(await_waiters(resp, "k", 1));
  resp.call({"LOCK.RELEASE", "k", str(first.body.at("handle"), "handle")});
  waiter.join();
  EXPECT_EQ(granted.status, 200) << granted.raw;
  EXPECT_EQ(str(granted.body.at("handle"), "key"), "k");
}

TEST_F(HttpApi, AClientThatHangsUpWhileWaitingLeavesTheQueue) {
  auto first = post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":60000})");
  Child hung = Child::start({"curl", "-s", "-X", "POST", server.http_url() + "/v1/locks/acquire",
                             "--data-binary", R"({"key":"k","ttlMs":1000,"timeoutMs":60000})"});
  auto resp = server.client();
  ASSERT_TRUE(await_waiters(resp, "k", 1));
  hung.signal(SIGKILL);
  hung.wait();
  EXPECT_TRUE(await_waiters(resp, "k", 0));
  // Releasing now hands the key to nobody.
  resp.call({"LOCK.RELEASE", "k", str(first.body.at("handle"), "handle")});
  EXPECT_EQ(resp.call({"LOCK.STATUS", "k"}).number("held"), 0);
}

TEST_F(HttpApi, SigtermAnswersABlockedAcquireWith503AndExitsCleanly) {
  ASSERT_EQ(post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":60000})").status, 200);
  Reply blocked;
  std::thread waiter([&] {
    blocked = post("/v1/locks/acquire", R"({"key":"k","ttlMs":1000,"timeoutMs":30000})");
  });
  auto resp = server.client();
  ASSERT_TRUE(await_waiters(resp, "k", 1));
  EXPECT_EQ(server.stop(), 0);
  waiter.join();
  EXPECT_EQ(blocked.status, 503) << blocked.raw;
  EXPECT_EQ(str(blocked.body, "errorCode"), "UNAVAILABLE");
}

TEST_F(HttpApi, AssignTransferUnassignHolder) {
  auto a = post("/v1/locks/assign", R"({"key":"turn","holderId":"white"})");
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(str(a.body, "holder"), "white");
  EXPECT_TRUE(a.body.at("leaseExpiresAt").is_null());
  auto held = post("/v1/locks/assign", R"({"key":"turn","holderId":"black"})");
  EXPECT_EQ(held.status, 409);
  EXPECT_EQ(str(held.body, "errorCode"), "LOCK_HELD");
  auto wrong = post("/v1/locks/transfer", R"({"key":"turn","toId":"black","fromId":"black"})");
  EXPECT_EQ(wrong.status, 409);
  EXPECT_EQ(str(wrong.body, "errorCode"), "LOCK_NOT_HOLDER");
  auto t = post("/v1/locks/transfer", R"({"key":"turn","toId":"black","fromId":"white"})");
  EXPECT_EQ(t.status, 200);
  EXPECT_GT(t.body.at("token").as_int64(), a.body.at("token").as_int64());
  auto h = curl("GET", "/v1/locks/holder?key=turn");
  EXPECT_EQ(str(h.body, "holder"), "black");
  EXPECT_EQ(post("/v1/locks/unassign", R"({"key":"turn","holderId":"white"})").status, 409);
  EXPECT_EQ(post("/v1/locks/unassign", R"({"key":"turn","holderId":"black"})").body.at("released"),
            true);
  EXPECT_EQ(post("/v1/locks/unassign", R"({"key":"turn"})").body.at("released"), false);
  EXPECT_TRUE(curl("GET", "/v1/locks/holder?key=turn").body.at("holder").is_null());
}

TEST_F(HttpApi, ABlockingAssignWaitsInTheQueueAndEndsIn409WhenItDoesNotGetTheKey) {
  ASSERT_EQ(post("/v1/locks/assign", R"({"key":"turn","holderId":"white"})").status, 200);
  auto timeout = post("/v1/locks/assign", R"({"key":"turn","holderId":"black","timeoutMs":150})");
  EXPECT_EQ(timeout.status, 409) << timeout.raw;
  EXPECT_EQ(str(timeout.body, "errorCode"), "LOCK_TIMEOUT");
  EXPECT_EQ(str(timeout.body.at("details"), "key"), "turn");
  EXPECT_EQ(timeout.body.at("details").at("timeoutMs"), 150);

  Reply granted;
  std::thread waiter([&] {
    granted = post("/v1/locks/assign", R"({"key":"turn","holderId":"black","timeoutMs":10000})");
  });
  auto resp = server.client();
  ASSERT_TRUE(await_waiters(resp, "turn", 1));
  ASSERT_EQ(post("/v1/locks/unassign", R"({"key":"turn","holderId":"white"})").body.at("released"),
            true);
  waiter.join();
  ASSERT_EQ(granted.status, 200) << granted.raw;
  EXPECT_EQ(str(granted.body, "holder"), "black");
  EXPECT_EQ(str(granted.body, "key"), "turn");
  EXPECT_TRUE(granted.body.at("leaseExpiresAt").is_null());
  EXPECT_EQ(str(curl("GET", "/v1/locks/holder?key=turn").body, "holder"), "black");
}

TEST_F(HttpApi, ConcurrentTransfersOfOneKeyHaveExactlyOneWinner) {
  for (int round = 0; round < 10; ++round) {
    std::string key = "race:" + std::to_string(round);
    ASSERT_EQ(post("/v1/locks/assign", R"({"key":")" + key + R"(","holderId":"alice"})").status,
              200);
    std::vector<Reply> replies(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        replies[static_cast<std::size_t>(i)] =
            post("/v1/locks/transfer", R"({"key":")" + key + R"(","toId":"p)" + std::to_string(i) +
                                           R"(","fromId":"alice"})");
      });
    }
    for (auto& t : threads) t.join();
    int winners = 0;
    for (const auto& r : replies) {
      if (r.status == 200) {
        ++winners;
      } else {
        EXPECT_EQ(r.status, 409);
        EXPECT_EQ(str(r.body, "errorCode"), "LOCK_NOT_HOLDER");
      }
    }
    EXPECT_EQ(winners, 1);
  }
}

TEST_F(HttpApi, MalformedInputIs400NamingTheField) {
  struct Case {
    std::string path, body, field;
  } cases[] = {
      {"/v1/locks/acquire", "{not json", ""},
      {"/v1/locks/acquire", "[1,2]", ""},
      {"/v1/locks/acquire", R"({"ttlMs":1000,"timeoutMs":0})", "key"},
      {"/v1/locks/acquire", R"({"key":"k","timeoutMs":0})", "ttlMs"},
      {"/v1/locks/acquire", R"({"key":"k","ttlMs":1000})", "timeoutMs"},
      {"/v1/locks/acquire", R"({"key":"k","ttlMs":1000.0,"timeoutMs":0})", "ttlMs"},
      {"/v1/locks/acquire", R"({"key":"k","ttlMs":"1000","timeoutMs":0})", "ttlMs"},
      {"/v1/locks/acquire", R"({"key":7,"ttlMs":1000,"timeoutMs":0})", "key"},
      {"/v1/locks/acquire", R"({"key":"k","ttlMs":1000,"timeoutMs":0,"colour":"red"})", "colour"},
      {"/v1/locks/acquire", R"({"key":"k","ttlMs":18446744073709551615,"timeoutMs":0})", "ttlMs"},
      {"/v1/locks/try-acquire", R"({"key":"k","ttlMs":0})", ""},
      {"/v1/locks/try-acquire", R"({"key":"","ttlMs":10})", ""},
      {"/v1/locks/try-acquire", R"({"key":"k","ttlMs":10,"owner":""})", ""},
      {"/v1/locks/renew", R"({"key":"k","ttlMs":10})", "handle"},
      {"/v1/locks/transfer", R"({"key":"k","toId":"a"})", "fromId"},
  };
  for (const auto& c : cases) {
    auto r = post(c.path, c.body);
    EXPECT_EQ(r.status, 400) << c.body << " -> " << r.raw;
    EXPECT_EQ(str(r.body, "errorCode"), "INVALID_ARGUMENT") << r.raw;
    if (!c.field.empty()) {
      EXPECT_EQ(str(r.body.at("details"), "field"), c.field) << r.raw;
    }
  }
  EXPECT_EQ(curl("GET", "/v1/locks/status").status, 400);
  EXPECT_EQ(curl("GET", "/v1/locks?count=0").status, 400);
  EXPECT_EQ(curl("GET", "/v1/locks/status?key=").status, 400);
  EXPECT_EQ(curl("GET", "/v1/locks/holder?key=k").status, 200);
}

TEST_F(HttpApi, UnknownRoutesAndWrongMethods) {
  auto nf = curl("GET", "/v1/nothing");
  EXPECT_EQ(nf.status, 404);
  EXPECT_EQ(str(nf.body, "errorCode"), "NOT_FOUND");
  auto na = curl("GET", "/v1/locks/acquire");
  EXPECT_EQ(na.status, 405);
  EXPECT_EQ(str(na.body, "errorCode"), "METHOD_NOT_ALLOWED");
  EXPECT_EQ(curl("DELETE", "/v1/locks/status?key=k").status, 405);
}

// Sends `request` as is and returns every byte the server answers until it closes.
std::string raw_exchange(int port, const std::string& request) {
  const int fd = tcp_connect(port);
  if (fd < 0) return "";
  send_all(fd, request);
  const std::string response = read_until_closed(fd);
  ::close(fd);
  return response;
}

// Sends `request` as is (curl would percent-encode the path) and returns the response's body.
std::string raw_http(int port, const std::string& request) {
  const std::string response = raw_exchange(port, request);
  const auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

// A connection whose acquire of `key` waits in the queue (`resp` sees it there), with a second
// request sent behind it while it waits (HTTP/1.1 pipelining). -1 if any step failed.
int waiting_acquire_then_healthz(const ServerProcess& server, RespClient& resp,
                                 const std::string& key) {
  const std::string body = R"({"key":")" + key + R"(","ttlMs":60000,"timeoutMs":60000})";
  const std::string acquire =
      "POST /v1/locks/acquire HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const int fd = tcp_connect(server.http_port());
  if (fd < 0) return -1;
  if (!send_all(fd, acquire) || !await_waiters(resp, key, 1) ||
      !send_all(fd, "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_F(HttpApi, APipelinedRequestBehindABlockedAcquireIsAnsweredAfterTheGrant) {
  auto first = post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":60000})");
  auto resp = server.client();
  const int fd = waiting_acquire_then_healthz(server, resp, "k");
  ASSERT_GE(fd, 0);
  // The server read the second request before the acquire is answered.
  EXPECT_EQ(resp.call({"LOCK.STATUS", "k"}).number("waiters"), 1);
  resp.call({"LOCK.RELEASE", "k", str(first.body.at("handle"), "handle")});
  const std::string responses = read_until_closed(fd);
  ::close(fd);
  const auto grant = responses.find("\"handle\":{\"key\":\"k\"");
  const auto health = responses.find(R"({"status":"ok"})");
  EXPECT_NE(grant, std::string::npos) << responses;
  EXPECT_NE(health, std::string::npos) << responses;
  EXPECT_LT(grant, health);
}

TEST_F(HttpApi, AClientThatPipelinedBehindABlockedAcquireAndHangsUpLeavesTheQueue) {
  post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":60000})");
  auto resp = server.client();
  const int fd = waiting_acquire_then_healthz(server, resp, "k");
  ASSERT_GE(fd, 0);
  ::close(fd);  // the hang-up, behind the second request
  EXPECT_TRUE(await_waiters(resp, "k", 0));
}

// While an acquire waits, the session reads pipelined requests only up to one request's worth
// (8 KiB of headers and 1 MiB of body) and then stops watching the socket. Once nothing but the
// waiter's plain pointer referred to the session, it was freed, and the grant crashed the
// server. Now the session keeps itself while it waits, and answers everything after the grant.
TEST_F(HttpApi, ABlockedAcquireWithMoreThanARequestPipelinedBehindItIsAnsweredAndSoIsTheRest) {
  auto first = post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":60000})");
  auto resp = server.client();
  const std::string body = R"({"key":"k","ttlMs":1000,"timeoutMs":30000})";
  const int fd = tcp_connect(server.http_port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "POST /v1/locks/acquire HTTP/1.1\r\nHost: h\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body));
  ASSERT_TRUE(await_waiters(resp, "k", 1));
  constexpr std::size_t kHealthChecks = 40000;
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n";
  std::string pipelined;
  for (std::size_t i = 0; i < kHealthChecks; ++i) pipelined += health;
  pipelined += "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
  std::jthread writer([&] { send_all(fd, pipelined); });  // joined also if a call below throws
  // The session stops reading once it holds more than 1 MiB + 8 KiB - 4 KiB, in reads of 4 KiB.
  constexpr std::size_t kStopsAt = 1024 * 1024 + 8 * 1024 - 4 * 1024;
  const bool stopped = await_unread_by_server(
      server.http_port(), fd, pipelined.size() - kStopsAt - 4096, pipelined.size() - kStopsAt - 1);
  resp.call({"LOCK.RELEASE", "k", str(first.body.at("handle"), "handle")});
  writer.join();
  const std::string responses = read_until_closed(fd);
  ::close(fd);
  ASSERT_TRUE(stopped) << "the session did not stop reading where expected";
  EXPECT_EQ(responses.find("HTTP/1.1 200 OK"), 0u);
  EXPECT_NE(responses.find("\"handle\":{\"key\":\"k\""), std::string::npos);
  EXPECT_EQ(occurrences(responses, R"({"status":"ok"})"), kHealthChecks + 1);
  EXPECT_EQ(resp.call({"PING"}).str, "PONG");  // the server is still there
}

TEST_F(HttpApi, HeadAnswersWithTheHeadersOfGetAndNoBody) {
  // A HEAD response that carried a body would be read as the start of the next response.
  const std::string out =
      raw_exchange(server.http_port(),
                   "HEAD /healthz HTTP/1.1\r\nHost: h\r\n\r\n"
                   "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  const auto end_of_head = out.find("\r\n\r\n");
  ASSERT_NE(end_of_head, std::string::npos) << out;
  const std::string head = out.substr(0, end_of_head);
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
  EXPECT_NE(head.find("Content-Length: 15"), std::string::npos) << out;  // GET's body length
  const std::string rest = out.substr(end_of_head + 4);
  EXPECT_EQ(rest.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
  EXPECT_NE(rest.find("\r\n\r\n{\"status\":\"ok\"}"), std::string::npos) << out;
}

TEST_F(HttpApi, UnknownQueryParametersAndOversizedPagesAreRefusedNamingTheField) {
  auto unknown = curl("GET", "/v1/locks/status?key=k&colour=red");
  EXPECT_EQ(unknown.status, 400) << unknown.raw;
  EXPECT_EQ(str(unknown.body.at("details"), "field"), "colour");
  auto twice = curl("GET", "/v1/locks/status?key=a&key=b");
  EXPECT_EQ(twice.status, 400) << twice.raw;
  EXPECT_EQ(str(twice.body.at("details"), "field"), "key");
  auto on_post = curl("POST", "/v1/locks/try-acquire?debug=1", R"({"key":"k","ttlMs":1000})");
  EXPECT_EQ(on_post.status, 400) << on_post.raw;
  auto too_many = curl("GET", "/v1/locks?count=10001");
  EXPECT_EQ(too_many.status, 400) << too_many.raw;
  EXPECT_EQ(curl("GET", "/v1/locks?count=10000").status, 200);
  EXPECT_EQ(curl("GET", "/v1/locks/status?key=k").status, 200);
}

TEST_F(HttpApi, ABodyFieldGivenTwiceIs400NamingItAndChangesNothing) {
  // As a query parameter given twice: the client would not know which value counted.
  auto twice = post("/v1/locks/try-acquire", R"({"key":"dup:a","ttlMs":60000,"key":"dup:b"})");
  EXPECT_EQ(twice.status, 400) << twice.raw;
  EXPECT_EQ(str(twice.body, "errorCode"), "INVALID_ARGUMENT") << twice.raw;
  EXPECT_EQ(str(twice.body, "message"), "key is given twice") << twice.raw;
  EXPECT_EQ(str(twice.body.at("details"), "field"), "key") << twice.raw;
  // The same key inside an entry of acquire-all's keys.
  auto nested = post("/v1/locks/try-acquire-all",
                     R"({"ttlMs":60000,"keys":[{"key":"dup:a"},{"key":"dup:b","key":"dup:c"}]})");
  EXPECT_EQ(nested.status, 400) << nested.raw;
  EXPECT_EQ(str(nested.body.at("details"), "field"), "key") << nested.raw;
  for (const char* key : {"dup:a", "dup:b", "dup:c"}) {
    auto st = curl("GET", std::string("/v1/locks/status?key=") + key);
    EXPECT_FALSE(st.body.at("held").as_bool()) << key << ": " << st.raw;
  }
  // Each once: granted.
  EXPECT_EQ(post("/v1/locks/try-acquire", R"({"key":"dup:a","ttlMs":60000})").status, 200);
}

TEST_F(HttpApi, AValueTheContractRefusesNamesItsFieldInDetails) {
  auto negative = post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":-1})");
  EXPECT_EQ(negative.status, 400) << negative.raw;
  EXPECT_EQ(str(negative.body.at("details"), "field"), "ttlMs");
  auto empty_key = post("/v1/locks/try-acquire", R"({"key":"","ttlMs":1000})");
  EXPECT_EQ(str(empty_key.body.at("details"), "field"), "key");
  auto owner = post("/v1/locks/try-acquire", R"({"key":"k","ttlMs":1000,"owner":""})");
  EXPECT_EQ(str(owner.body.at("details"), "field"), "owner");
}

TEST_F(HttpApi, ARuleSetCanBeReadByName) {
  const std::string toml =
      "[ruleSet]\nname = \"policy\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = \"true\"\n";
  ASSERT_EQ(curl("PUT", "/v1/rule-sets/policy", toml).status, 200);
  auto got = curl("GET", "/v1/rule-sets/policy");
  ASSERT_EQ(got.status, 200) << got.raw;
  EXPECT_EQ(str(got.body, "name"), "policy");
  EXPECT_EQ(str(got.body, "toml"), toml);
  EXPECT_EQ(curl("GET", "/v1/rule-sets/other").status, 404);
}

TEST_F(HttpApi, AWrongMethodIsAnsweredWithTheMethodsThePathTakes) {
  const auto answer = [&](const std::string& request_line) {
    return raw_exchange(server.http_port(),
                        request_line + " HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  };
  const std::string status = answer("DELETE /v1/locks/status?key=k");
  EXPECT_EQ(status.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << status;
  EXPECT_NE(status.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << status;
  const std::string rule_set = answer("PATCH /v1/rule-sets/policy");
  EXPECT_NE(rule_set.find("\r\nAllow: PUT, GET, HEAD, DELETE\r\n"), std::string::npos) << rule_set;
  const std::string acquire = answer("HEAD /v1/locks/acquire");
  EXPECT_NE(acquire.find("\r\nAllow: POST\r\n"), std::string::npos) << acquire;
  EXPECT_EQ(acquire.substr(acquire.find("\r\n\r\n") + 4), "") << acquire;  // HEAD: no body
}

// The server's resident memory in KiB, from /proc.
long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// A response that waits for the log (a grant) once kept its session alive for good: a callback
// that held a shared_ptr to itself. About 2 KiB per connection, so 6 000 connections would
// have added some 12 MiB.
TEST_F(HttpApi, ConnectionsWhoseResponseWaitedForTheLogGiveTheirMemoryBack) {
  int next = 0;
  auto churn = [&](int n) {
    for (int i = 0; i < n; ++i) {
      // A new key each time, so every try is a grant; its lease ends at once.
      const std::string body = R"({"key":"churn:)" + std::to_string(next++) + R"(","ttlMs":1})";
      const std::string request =
          "POST /v1/locks/try-acquire HTTP/1.1\r\nHost: h\r\n"
          "Connection: close\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      ASSERT_NE(raw_http(server.http_port(), request), "");
    }
  };
  churn(1000);  // warm up: buffers, histograms, the allocator's pools
  const long before = rss_kib(server.pid());
  churn(6000);
  const long after = rss_kib(server.pid());
  ASSERT_GT(before, 0);
  EXPECT_LT(after - before, 4 * 1024) << "RSS " << before << " KiB -> " << after << " KiB";
  auto s = curl("GET", "/metrics");
  EXPECT_NE(s.raw.find("\nholdfast_grants_total 7000"), std::string::npos)
      << s.raw.substr(s.raw.find("\nholdfast_grants_total"), 40);
}

TEST_F(HttpApi, AnErrorQuotingBytesThatAreNotUtf8IsStillJson) {
  // Found by fuzz/http_fuzz.cc: the 404 quoted the path's bytes as they came.
  const std::string body = raw_http(
      server.http_port(), "GET /v1/\x87\xC9x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  boost::system::error_code ec;
  const json::value v = json::parse(body, ec);  // also checks that strings are UTF-8
  ASSERT_FALSE(ec) << ec.message() << ": " << body;
  EXPECT_EQ(str(v, "errorCode"), "NOT_FOUND");
  EXPECT_EQ(str(v, "message"), "no route /v1/\xEF\xBF\xBD\xEF\xBF\xBDx");
}

TEST_F(HttpApi, OversizedBodiesAndHeadersAreRefused) {
  std::string big(2 * 1024 * 1024, 'x');
  auto body = post("/v1/locks/acquire", big);
  EXPECT_EQ(body.status, 413);
  auto headers = curl("GET", "/healthz", "", {"-H", "X-Big: " + std::string(10000, 'h')});
  EXPECT_EQ(headers.status, 431);
  EXPECT_EQ(curl("GET", "/healthz").status, 200);
}

TEST_F(HttpApi, KeepAliveServesManyRequestsOnOneConnection) {
  auto r = run({"curl", "-sv", server.http_url() + "/healthz", server.http_url() + "/readyz"});
  EXPECT_NE(r.err.find("Re-using existing connection"), std::string::npos) << r.err;
  // Both answers, one after the other (a node adds its database's replication to the second).
  EXPECT_EQ(r.out.rfind(R"({"status":"ok"}{"status":"ready")", 0), 0u) << r.out;
  EXPECT_EQ(r.out.back(), '}') << r.out;
}

// A small parser for the Prometheus text exposition format: every line is a comment
// (# HELP/# TYPE name ...) or `name{labels} value`; returns series -> value.
std::map<std::string, double> parse_prometheus(const std::string& text, std::string* error) {
  std::map<std::string, double> series;
  std::map<std::string, std::string> types;
  std::istringstream in(text);
  std::string line;
  std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*)\})? (-?[0-9.eE+-]+|\+Inf|NaN)$)");
  std::regex meta(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, meta)) {
      if (m[1] == "TYPE") types[m[2]] = m[3];
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      *error = "bad line: " + line;
      return series;
    }
    std::string name = m[1];
    std::string base = std::regex_replace(name, std::regex("_(bucket|sum|count)$"), "");
    if (!types.count(name) && !types.count(base)) {
      *error = "sample without TYPE: " + line;
      return series;
    }
    series[name + std::string(m[2])] = std::stod(m[5]);
  }
  return series;
}

TEST_F(HttpApi, MetricsParseAndTheirCountersMove) {
  std::string error;
  auto before = parse_prometheus(curl("GET", "/metrics").raw, &error);
  ASSERT_EQ(error, "");
  for (const char* name :
       {"holdfast_locks_held", "holdfast_waiters", "holdfast_grants_total",
        "holdfast_releases_total", "holdfast_expiries_total", "holdfast_acquire_timeouts_total",
        "holdfast_connections", "holdfast_wal_snapshots_total",
        "holdfast_wal_snapshots_skipped_total", "holdfast_wal_snapshot_in_progress"})
    EXPECT_TRUE(before.count(name)) << name;
  EXPECT_EQ(before["holdfast_wal_snapshots_skipped_total"], 0);
  auto resp = server.client();
  auto h = resp.call({"LOCK.TRY", "m", "TTL", "60000"});
  resp.call({"LOCK.TRY", "short", "TTL", "1"});
  resp.call({"LOCK.ACQUIRE", "m", "TTL", "100", "TIMEOUT", "10"});
  resp.call({"LOCK.RELEASE", "m", h.text("handle")});
  auto after = parse_prometheus(curl("GET", "/metrics").raw, &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(after["holdfast_grants_total"] - before["holdfast_grants_total"], 2);
  EXPECT_EQ(after["holdfast_releases_total"] - before["holdfast_releases_total"], 1);
  EXPECT_EQ(after["holdfast_acquire_timeouts_total"] - before["holdfast_acquire_timeouts_total"],
            1);
  EXPECT_GE(after["holdfast_expiries_total"] - before["holdfast_expiries_total"], 0);
  EXPECT_GE(after["holdfast_connections"], 1);
  EXPECT_EQ(after["holdfast_command_duration_seconds_count{command=\"LOCK.TRY\"}"], 2);
  EXPECT_EQ(after["holdfast_command_duration_seconds_bucket{command=\"LOCK.TRY\",le=\"+Inf\"}"], 2);
}

TEST_F(HttpApi, ActiveConnectionsLeaveOutTheIdleOnes) {
  // Twenty connections that send nothing, beside one that sends: the idle ones are open but not
  // active (with --fsync always a commit waits for no more clients than are active).
  std::vector<RespClient> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(server.client());
  auto busy = server.client();
  for (int i = 0; i < 300; ++i) busy.call({"PING"});
  std::string error;
  auto m = parse_prometheus(curl("GET", "/metrics").raw, &error);
  ASSERT_EQ(error, "");
  EXPECT_GE(m["holdfast_connections"], 21);
  EXPECT_LE(m["holdfast_active_connections"], 3);  // the busy one, and this test's HTTP calls
  EXPECT_GE(m["holdfast_active_connections"], 1);
  // Now all of them take turns: every one of them is active.
  for (int round = 0; round < 20; ++round)
    for (auto& c : idle) c.call({"PING"});
  m = parse_prometheus(curl("GET", "/metrics").raw, &error);
  ASSERT_EQ(error, "");
  EXPECT_GE(m["holdfast_active_connections"], 20);
}

TEST_F(HttpApi, MetricsCountGrantsByMode) {
  std::string error;
  auto before = parse_prometheus(curl("GET", "/metrics").raw, &error);
  ASSERT_EQ(error, "");
  const std::string exclusive = "holdfast_grants_by_mode_total{mode=\"exclusive\"}";
  const std::string shared = "holdfast_grants_by_mode_total{mode=\"shared\"}";
  const std::string semaphore = "holdfast_grants_by_mode_total{mode=\"semaphore\"}";
  for (const auto& name : {exclusive, shared, semaphore}) EXPECT_TRUE(before.count(name)) << name;
  auto resp = server.client();
  resp.call({"LOCK.TRY", "plain", "TTL", "60000"});
  resp.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  resp.call({"LOCK.TRY", "doc", "TTL", "60000", "MODE", "SHARED"});
  resp.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4", "TAKE", "2"});
  resp.call({"LOCK.TRY", "pool", "TTL", "60000", "PERMITS", "4", "TAKE", "3"});  // no grant
  auto after = parse_prometheus(curl("GET", "/metrics").raw, &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(after[exclusive] - before[exclusive], 1);
  EXPECT_EQ(after[shared] - before[shared], 2);
  EXPECT_EQ(after[semaphore] - before[semaphore], 1);
  EXPECT_EQ(after[exclusive] + after[shared] + after[semaphore], after["holdfast_grants_total"])
      << "the split adds up to the total";
}

TEST_F(HttpApi, MetricsShowTheHoldsByModeAndThePermitsHeld) {
  if (!server.store_url().empty())
    GTEST_SKIP() << "a node over PostgreSQL does not count holds by mode";
  std::string error;
  auto metrics = [&] {
    auto m = parse_prometheus(curl("GET", "/metrics").raw, &error);
    EXPECT_EQ(error, "");
    return m;
  };
  const std::string exclusive = "holdfast_holds_by_mode{mode=\"exclusive\"}";
  const std::string shared = "holdfast_holds_by_mode{mode=\"shared\"}";
  const std::string semaphore = "holdfast_holds_by_mode{mode=\"semaphore\"}";
  const std::string permits = "holdfast_semaphore_permits_held";
  auto before = metrics();
  for (const auto& name : {exclusive, shared, semaphore, permits})
    EXPECT_TRUE(before.count(name)) << name;
  auto resp = server.client();
  resp.call({"LOCK.TRY", "gauge:plain", "TTL", "60000"});
  resp.call({"LOCK.TRY", "gauge:doc", "TTL", "60000", "MODE", "SHARED"});
  resp.call({"LOCK.TRY", "gauge:doc", "TTL", "60000", "MODE", "SHARED"});
  auto two = resp.call({"LOCK.TRY", "gauge:pool", "TTL", "60000", "PERMITS", "5", "TAKE", "2"});
  resp.call({"LOCK.TRY", "gauge:pool", "TTL", "60000", "PERMITS", "5", "TAKE", "3"});
  auto during = metrics();
  EXPECT_EQ(during[exclusive] - before[exclusive], 1);
  EXPECT_EQ(during[shared] - before[shared], 2);
  EXPECT_EQ(during[semaphore] - before[semaphore], 2);
  EXPECT_EQ(during[permits] - before[permits], 5);
  EXPECT_EQ(during[exclusive] + during[shared] + during[semaphore], during["holdfast_locks_held"])
      << "the split adds up to the holds";
  ASSERT_EQ(resp.call({"LOCK.RELEASE", "gauge:pool", two.text("handle")}).number("released"), 1);
  auto after = metrics();
  EXPECT_EQ(after[semaphore] - before[semaphore], 1);
  EXPECT_EQ(after[permits] - before[permits], 3) << "the released hold gave back its 2 permits";
}

}  // namespace
}  // namespace holdfast::testing
