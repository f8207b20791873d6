// The Redis lock idiom against Redis itself: the same commands to a redis-server this test
// starts and to Holdfast, reply by reply. docs/redis-locks.md promises Redis's syntax, reply
// shapes and error texts for SET and the EXPIRE family; where Holdfast means to differ (a key
// without an expiry still has a lease, PERSIST) the cases stay away, and the docs say so.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/process.h"
#include "support/redis_server.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

// One command; "{k}" in it stands for the case's key. With `buckets`, an integer reply is
// compared by the interval it falls in (times left move between the two servers' answers).
struct Step {
  std::vector<std::string> args;
  std::vector<std::int64_t> buckets = {};
};

struct Case {
  std::string name;
  std::vector<Step> steps;
};

std::string shown(const RespValue& v, const std::vector<std::int64_t>& buckets) {
  if (buckets.empty() || v.type != RespValue::Type::kInteger) return v.debug();
  std::size_t i = 0;
  while (i < buckets.size() && v.integer > buckets[i]) ++i;
  if (i == 0)
    return ":" + std::to_string(v.integer) + " (at most " + std::to_string(buckets[0]) + ")";
  return ":(" + std::to_string(buckets[i - 1]) + ", " +
         (i < buckets.size() ? std::to_string(buckets[i]) : "...") + "]";
}

constexpr const char* kMax = "9223372036854775807";

// Bad input: each the one command, on a fresh key.
std::vector<Case> bad_input() {
  std::vector<Case> out;
  auto one = [&](std::vector<std::string> args) {
    std::string name;
    for (const auto& a : args) name += (name.empty() ? "" : " ") + a;
    out.push_back({name, {{std::move(args)}}});
  };
  for (const char* kind : {"EX", "PX", "EXAT", "PXAT"}) {
    for (const char* amount : {"abc", "1.5", "01", "+10", "-0", "0", "-1", "99999999999999999999"})
      one({"SET", "{k}", "v", kind, amount});
    one({"SET", "{k}", "v", kind, kMax});
    one({"SET", "{k}", "v", kind});  // no amount
  }
  one({"SET", "{k}", "v", "EX", "9223372036854775"});  // overflows once in ms and from now
  one({"SET", "{k}", "v", "PX", "9223372036854775000"});
  for (std::vector<std::string> words :
       std::vector<std::vector<std::string>>{{"EX", "10", "PX", "10"},
                                             {"PX", "10", "PXAT", "10"},
                                             {"NX", "XX"},
                                             {"XX", "NX"},
                                             {"KEEPTTL", "EX", "10"},
                                             {"EX", "10", "KEEPTTL"},
                                             {"FOO"},
                                             {"NX", "PX", "10", "BAR"}}) {
    std::vector<std::string> args = {"SET", "{k}", "v"};
    args.insert(args.end(), words.begin(), words.end());
    one(args);
  }
  one({"SET", "{k}"});
  for (const char* cmd : {"PEXPIRE", "EXPIRE", "PEXPIREAT", "EXPIREAT"}) {
    one({cmd, "{k}", "1000", "FOO"});
    one({cmd, "{k}", "abc"});
    one({cmd, "{k}", "1.5"});
    one({cmd, "{k}", "01"});
    one({cmd, "{k}", "abc", "FOO"});  // the options are read first
    one({cmd, "{k}", "abc", "NX", "XX"});
    one({cmd, "{k}", "1000", "NX", "GT"});
    one({cmd, "{k}", "1000", "XX", "NX"});
    one({cmd, "{k}", "1000", "GT", "LT"});
    one({cmd, "{k}", "1000", "lt", "gt"});
    one({cmd, "{k}", kMax});
    one({cmd, "{k}", "-9223372036854775808"});
    one({cmd, "{k}", "9223372036854775"});
    one({cmd, "{k}"});
  }
  return out;
}

// What SET and PEXPIRE do with what Redis accepts, on keys with an expiry.
std::vector<Case> conditions() {
  const std::vector<std::int64_t> ms = {0, 1000, 50'000, 100'000, 200'000, 300'000};
  const std::vector<std::int64_t> s = {0, 1, 50, 100, 200, 300};
  return {
      {"SET's words repeat; the later expiry wins",
       {{{"SET", "{k}", "v", "EX", "10", "EX", "150"}},
        {{"PTTL", "{k}"}, ms},
        {{"SET", "{k}", "v", "PX", "20000", "px", "250000"}},
        {{"PTTL", "{k}"}, ms},
        {{"SET", "{k}", "v", "xx", "XX", "keepttl", "KEEPTTL", "get", "GET"}},
        {{"PTTL", "{k}"}, ms},
        {{"SET", "{k}", "w", "NX", "NX", "GET", "PX", "1000"}},
        {{"GET", "{k}"}}}},
      {"SET NX GET on a free key, then XX",
       {{{"SET", "{k}", "v", "NX", "GET", "PX", "100000"}},
        {{"SET", "{k}", "v", "XX", "GET", "PX", "200000"}},
        {{"PTTL", "{k}"}, ms},
        {{"SET", "{k}:free", "v", "XX", "PX", "1000"}},
        {{"EXISTS", "{k}:free"}}}},
      {"SET with an instant already past leaves nothing",
       {{{"SET", "{k}", "v", "PXAT", "1"}},
        {{"EXISTS", "{k}"}},
        {{"SET", "{k}", "v", "EXAT", "1", "GET"}},
        {{"GET", "{k}"}}}},
      {"PEXPIRE XX GT: only later",
       {{{"SET", "{k}", "v", "PX", "100000"}},
        {{"PEXPIRE", "{k}", "1000", "XX", "GT"}},
        {{"PTTL", "{k}"}, ms},
        {{"PEXPIRE", "{k}", "200000", "XX", "GT"}},
        {{"PTTL", "{k}"}, ms},
        {{"PEXPIRE", "{k}", "250000", "gt", "xx"}},
        {{"PTTL", "{k}"}, ms}}},
      {"PEXPIRE XX LT: only earlier",
       {{{"SET", "{k}", "v", "PX", "100000"}},
        {{"PEXPIRE", "{k}", "200000", "XX", "LT"}},
        {{"PTTL", "{k}"}, ms},
        {{"PEXPIRE", "{k}", "50000", "XX", "LT"}},
        {{"PTTL", "{k}"}, ms}}},
      {"PEXPIRE with one word, each as often as given",
       {{{"SET", "{k}", "v", "PX", "100000"}},
        {{"PEXPIRE", "{k}", "1000", "NX"}},
        {{"PEXPIRE", "{k}", "150000", "XX", "XX"}},
        {{"PTTL", "{k}"}, ms},
        {{"PEXPIRE", "{k}", "100000", "GT", "GT"}},
        {{"PEXPIRE", "{k}", "250000", "GT"}},
        {{"PTTL", "{k}"}, ms},
        {{"PEXPIRE", "{k}", "300000", "LT"}},
        {{"PEXPIRE", "{k}", "50000", "lt", "LT"}},
        {{"PTTL", "{k}"}, ms}}},
      {"EXPIRE in seconds",
       {{{"SET", "{k}", "v", "EX", "100"}},
        {{"EXPIRE", "{k}", "200", "XX", "GT"}},
        {{"TTL", "{k}"}, s},
        {{"EXPIRE", "{k}", "50", "XX", "LT"}},
        {{"TTL", "{k}"}, s}}},
      {"A free key: every condition answers 0",
       {{{"PEXPIRE", "{k}", "1000"}},
        {{"PEXPIRE", "{k}", "1000", "NX"}},
        {{"PEXPIRE", "{k}", "1000", "XX", "GT"}},
        {{"PEXPIRE", "{k}", "1000", "LT"}},
        {{"PTTL", "{k}"}},
        {{"TTL", "{k}"}}}},
      {"An expiry in the past frees the key",
       {{{"SET", "{k}", "v", "PX", "100000"}},
        {{"PEXPIRE", "{k}", "-1", "XX", "LT"}},
        {{"EXISTS", "{k}"}},
        {{"SET", "{k}", "v", "PX", "100000"}},
        {{"PEXPIREAT", "{k}", "1"}},
        {{"GET", "{k}"}},
        {{"SET", "{k}", "v", "PX", "100000"}},
        {{"EXPIREAT", "{k}", "1", "LT"}},
        {{"PTTL", "{k}"}}}},
      {"A far instant is accepted",
       {{{"SET", "{k}", "v", "PX", "100000"}},
        {{"PEXPIREAT", "{k}", kMax, "GT"}},
        {{"EXISTS", "{k}"}}}},
  };
}

class RedisDifferential : public ::testing::Test {
 protected:
  RedisServer redis;
  ServerProcess holdfast;

  void run_cases(const std::vector<Case>& cases, const std::string& prefix) {
    auto r = redis.client();
    auto h = holdfast.client();
    int n = 0;
    for (const Case& c : cases) {
      const std::string key = prefix + std::to_string(n++);
      for (const Step& step : c.steps) {
        std::vector<std::string> args = step.args;
        std::string text;
        for (auto& a : args) {
          for (std::size_t at; (at = a.find("{k}")) != std::string::npos;) a.replace(at, 3, key);
          text += (text.empty() ? "" : " ") + a;
        }
        const std::string from_redis = shown(r.call(args), step.buckets);
        const std::string from_holdfast = shown(h.call(args), step.buckets);
        EXPECT_EQ(from_holdfast, from_redis) << c.name << ": " << text;
      }
    }
    // Both still answer.
    EXPECT_EQ(r.call({"PING"}).str, "PONG");
    EXPECT_EQ(h.call({"PING"}).str, "PONG");
  }
};

TEST_F(RedisDifferential, BadInputGetsRedissOwnAnswer) {
  const auto cases = bad_input();
  ASSERT_GT(cases.size(), 80u);
  run_cases(cases, "bad:");
  // What Redis refused took no key here either, and what it took (PXAT at the largest
  // instant) is held here too.
  auto r = redis.client();
  auto h = holdfast.client();
  int held = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string key = "bad:" + std::to_string(i);
    const auto in_redis = r.call({"EXISTS", key}).integer;
    EXPECT_EQ(h.call({"EXISTS", key}).integer, in_redis) << cases[i].name;
    held += static_cast<int>(in_redis);
  }
  EXPECT_EQ(held, 1) << "PXAT 9223372036854775807 is an instant, far but valid";
}

TEST_F(RedisDifferential, SetAndExpireConditionsAgreeWithRedis) {
  run_cases(conditions(), "cond:");
}

}  // namespace
}  // namespace holdfast::testing
