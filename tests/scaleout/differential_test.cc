// One random stream of lock commands, sent to an embedded server and to a node over PostgreSQL:
// every reply must mean the same. Grant or nil, released or not, the same error code, the same
// key, holder, heldBy, owner, scope, kind and waiters; only handles, tokens and times may
// differ (scale-out tokens come from a sequence with gaps, times from another clock). Within
// each server, a key's tokens must never go down, and a new grant's token must be above every
// token the key had. Leases are long (60 s) and nothing blocks, so the stream does not depend
// on timing.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster.h"

namespace holdfast::testing {
namespace {

// A reply with handles, tokens and times left out, as text.
std::string meaning(const RespValue& v) {
  switch (v.type) {
    case RespValue::Type::kError:
      return "error " + v.error_code();
    case RespValue::Type::kNull:
      return "nil";
    case RespValue::Type::kInteger:
    case RespValue::Type::kBool:
      return std::to_string(v.integer);
    case RespValue::Type::kMap: {
      std::string out = "{";
      for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
        const std::string& name = v.items[i].str;
        if (name == "handle" || name == "token" || name == "acquiredAt" || name == "leaseExpiresAt")
          continue;
        out += name + "=" + meaning(v.items[i + 1]) + " ";
      }
      return out + "}";
    }
    case RespValue::Type::kArray: {
      std::string out = "[";
      for (const auto& item : v.items) out += meaning(item) + " ";
      return out + "]";
    }
    default:
      return v.str;
  }
}

// One server's side of the stream: its connection, the handles its grants gave per key (in
// order), and the highest token it showed per key.
struct Side {
  const char* name;
  RespClient client;
  std::map<std::string, std::vector<std::string>> handles;
  std::map<std::string, std::int64_t> top_token;

  // Records what the reply shows; `grant`: the command makes a new hold when it succeeds.
  void note(const std::string& key, const RespValue& r, bool grant, int step) {
    if (r.type != RespValue::Type::kMap) return;
    if (r.has("token") && !r.get("token")->is_null()) {  // LOCK.HOLDER of a free key: nil
      const std::int64_t token = r.number("token");
      std::int64_t& top = top_token[key];
      if (grant) {
        EXPECT_GT(token, top) << name << ", step " << step << ": a new grant's token";
      } else {
        EXPECT_GE(token, top) << name << ", step " << step << ": a key's token went down";
      }
      top = std::max(top, token);
    }
    if (grant && !r.text("handle").empty()) handles[key].push_back(r.text("handle"));
  }
};

TEST(EmbeddedAndScaleOut, AnswerARandomStreamOfLockCommandsAlike) {
  ServerProcess embedded;
  Cluster cluster(1);
  Side sides[2] = {{"embedded", embedded.client(), {}, {}},
                   {"scale-out", cluster.node(0).client(), {}, {}}};
  for (auto& s : sides) ASSERT_FALSE(s.client.call({"HELLO", "3"}).is_error());

  std::mt19937 rng(20261201);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> owners = {"", "run-1", "run-2"};
  const std::vector<std::string> holders = {"white", "black", "grey"};
  std::map<std::string, std::set<std::string>> outcomes;  // per command: kinds of answer
  for (int step = 0; step < 1500; ++step) {
    const std::string key = "k" + std::to_string(pick(5));
    const std::string owner = owners[static_cast<std::size_t>(pick(3))];
    const std::string holder = holders[static_cast<std::size_t>(pick(3))];
    const std::string other = holders[static_cast<std::size_t>(pick(3))];
    const int which_handle = pick(4);  // 0-1: the latest, 2: an earlier one, 3: a made-up one
    std::vector<std::string> args;
    bool grant = false;
    bool uses_handle = false;
    switch (pick(12)) {
      case 0:
      case 1:
        args = {"LOCK.TRY", key, "TTL", "60000"};
        grant = true;
        break;
      case 2:
        args = {"LOCK.ACQUIRE", key, "TTL", "60000", "TIMEOUT", "0"};
        grant = true;
        break;
      case 3:
      case 4:
        args = {"LOCK.RELEASE", key};
        uses_handle = true;
        break;
      case 5:
        args = {"LOCK.RENEW", key};
        uses_handle = true;
        break;
      case 6:
        args = {"LOCK.STATUS", key};
        break;
      case 7:
        // Not counted as a grant: assigning a key again to its holder refreshes the hold and
        // keeps its token.
        args = {"LOCK.ASSIGN", key, holder};
        if (pick(2) == 0) args.insert(args.end(), {"TTL", "60000"});
        break;
      case 8:
        args = {"LOCK.TRANSFER", key, other, "FROM", holder};
        grant = true;
        break;
      case 9:
        args = {"LOCK.UNASSIGN", key};
        if (pick(2) == 0) args.push_back(holder);
        break;
      case 10:
        args = {"LOCK.HOLDER", key};
        break;
      default:
        args = {"LOCK.LIST", "COUNT", "100"};
        break;
    }
    if ((args[0] == "LOCK.TRY" || args[0] == "LOCK.ACQUIRE") && !owner.empty())
      args.insert(args.end(), {"OWNER", owner});

    std::string meanings[2];
    for (int i = 0; i < 2; ++i) {
      Side& s = sides[i];
      std::vector<std::string> sent = args;
      if (uses_handle) {
        const auto& seen = s.handles[key];
        std::string handle = "0123456789ABCDEFGHJKMNPQRS";  // well-formed, never issued
        if (which_handle <= 1 && !seen.empty()) handle = seen.back();
        if (which_handle == 2 && seen.size() > 1) handle = seen[seen.size() - 2];
        sent.push_back(handle);
        if (args[0] == "LOCK.RENEW") sent.insert(sent.end(), {"TTL", "60000"});
      }
      const RespValue r = s.client.call(sent);
      meanings[i] = meaning(r);
      s.note(key, r, grant && !r.is_error() && !r.is_null(), step);
    }
    ASSERT_EQ(meanings[0], meanings[1]) << "step " << step << ": " << args[0] << " " << key;
    outcomes[args[0]].insert(meanings[0].substr(0, meanings[0].find(' ', 8)));
  }
  // The stream must have taken each command down more than one path.
  for (const char* command : {"LOCK.TRY", "LOCK.ACQUIRE", "LOCK.RELEASE", "LOCK.RENEW",
                              "LOCK.ASSIGN", "LOCK.TRANSFER", "LOCK.UNASSIGN"}) {
    std::string seen;
    for (const auto& o : outcomes[command]) seen += "<" + o + "> ";
    EXPECT_GE(outcomes[command].size(), 2u) << command << " only answered " << seen;
  }
}

}  // namespace
}  // namespace holdfast::testing
