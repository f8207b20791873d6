// The differential test: the same command sequences (cases/*.txt) sent to a real redis-server
// (Debian's 7.0) and to Holdfast (embedded, or a node over PostgreSQL under
// run_with_postgres.sh), in RESP2 and in RESP3, and every reply compared: the wire type, the
// bytes, the error text. Valid and invalid input alike: wrong types, bad numbers, bad flags,
// arity, expiry, scripts. Where Holdfast answers differently on purpose (a lock is never
// overwritten by a value, one database only), the case lives in cases/holdfast_only.txt with
// the reply it must give, and docs/redis-locks.md says why.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <thread>

#include "cases.h"
#include "reply_reader.h"
#include "support/redis_server.h"
#include "support/server_process.h"

#ifndef HOLDFAST_REDIS_DIFF_CASES
#error "HOLDFAST_REDIS_DIFF_CASES: the folder of the case files"
#endif

namespace holdfast::testing {
namespace {

struct Servers {
  RedisServer redis;
  ServerProcess holdfast{{"--fsync", "never"}};
};

// Both servers for the whole run: started before the first case, stopped after the last.
class ServersEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override { servers_ = std::make_unique<Servers>(); }
  void TearDown() override { servers_.reset(); }
  static Servers& get() { return *servers_; }

 private:
  static inline std::unique_ptr<Servers> servers_;
};

[[maybe_unused]] const auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new ServersEnvironment);

Servers& servers() { return ServersEnvironment::get(); }

struct Param {
  DiffCase c;
  int proto = 2;
  bool holdfast_only = false;
};

std::vector<Param> all_params() {
  std::vector<Param> out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(HOLDFAST_REDIS_DIFF_CASES))
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const bool only = file.stem() == "holdfast_only";
    for (DiffCase& c : load_cases(file.string())) {
      for (int proto : {2, 3}) {
        if (only && proto == 3) continue;  // their expected replies are written in RESP2
        out.push_back(Param{c, proto, only});
      }
    }
  }
  return out;
}

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

// Both integers, within 2000 of each other (times left, read a moment apart).
bool close_integers(const std::string& a, const std::string& b) {
  if (a.size() < 2 || b.size() < 2 || a[0] != ':' || b[0] != ':') return false;
  const long long x = std::stoll(a.substr(1)), y = std::stoll(b.substr(1));
  if (x < 0 || y < 0) return x == y;
  return std::llabs(x - y) <= 2000;
}

bool knows(ReplyReader& server, const std::string& command) {
  const std::string info = server.call({"COMMAND", "INFO", command});
  return info != "*[*nil]" && info != "*[$nil]" && info != "*[_]";
}

class RedisDiff : public ::testing::TestWithParam<Param> {};

TEST_P(RedisDiff, SameReplies) {
  const Param& p = GetParam();
  Servers& s = servers();
  ReplyReader holdfast(s.holdfast.port());
  std::unique_ptr<ReplyReader> redis;
  if (!p.holdfast_only) redis = std::make_unique<ReplyReader>(s.redis.port());
  for (const std::string& command : p.c.requires_commands) {
    if (!knows(holdfast, command))
      GTEST_SKIP() << "Holdfast has no " << command << " yet: this case waits for it";
  }
  const std::string hello = std::to_string(p.proto);
  holdfast.call({"HELLO", hello});
  if (redis) redis->call({"HELLO", hello});
  const std::string prefix = "diff:" + p.c.file + ":" + slug(p.c.name) + ":" + hello + ":";
  for (const CaseLine& line : p.c.lines) {
    if (line.sleep_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(line.sleep_ms));
      continue;
    }
    std::vector<std::string> args;
    std::string shown;
    for (const std::string& w : line.args) {
      args.push_back(with_keys(w, prefix));
      shown += (shown.empty() ? "" : " ") + (w.size() > 40 ? w.substr(0, 37) + "..." : w);
    }
    // HGETALL's pairs come in the hash's order, which is Redis's own business.
    const bool pairs = args[0] == "HGETALL" || args[0] == "hgetall";
    const std::string got = holdfast.call(args, pairs);
    const std::string where = p.c.file + ".txt:" + std::to_string(line.line_number) + " (" +
                              p.c.name + ", RESP" + hello + "): " + shown;
    if (line.expected) {
      EXPECT_EQ(got, *line.expected) << where;
      continue;
    }
    if (!redis) continue;
    const std::string want = redis->call(args, pairs);
    if (line.approximate && close_integers(got, want)) continue;
    if (line.prefix && got.size() > 1 && want.rfind(got, 0) == 0) continue;
    EXPECT_EQ(got, want) << where;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RedisDiff, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return slug(info.param.c.file + "_" + info.param.c.name) + "_resp" +
                                  std::to_string(info.param.proto);
                         });

}  // namespace
}  // namespace holdfast::testing
