// Property test of every kind of request together: exclusive, shared, semaphore and multi-key;
// acquire, try, release, renew, DEL, cancel, session end and the clock, in random (seeded,
// deterministic) sequences. A simple model keeps each key's FIFO queue of waiting requests
// (a multi-key request is in the queue of each of its keys) and the grants made. After every
// step:
//  - no key has more holds than its mode allows;
//  - no waiter is overtaken: a request granted at once found no waiter on any of its keys
//    (unless it re-took its own hold), and a waiter is granted only at the head of the queue
//    of every key it asked for;
//  - a multi-key grant is all or nothing: each key of the request got a hold, and later the
//    group's holds are either all still there or all gone;
//  - tokens only grow per key;
//  - no key is idle while a waiter could be granted;
// and at the end, once every lease and timeout has passed, nothing is left.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>

#include "core/lock_table.h"

namespace holdfast {
namespace {
namespace multi_property {

constexpr std::uint32_t kLimit = 3;                           // the semaphore key's permits
const std::vector<std::string> kKeys = {"a", "b", "c", "s"};  // "s" is the semaphore

class TokenWatch : public ChangeSink {
 public:
  void on_change(const Change& c) override {
    if (const auto* g = std::get_if<Granted>(&c)) see(g->hold);
    if (const auto* g = std::get_if<GroupGranted>(&c))
      for (const HoldState& h : g->holds) see(h);
  }
  void see(const HoldState& h) {
    EXPECT_GT(h.token, last[h.key]) << "tokens must only grow per key";
    last[h.key] = h.token;
  }
  std::map<std::string, std::uint64_t> last;
};

struct Pending {
  std::vector<std::string> keys;
  SessionId session = 0;
  bool multi = false;
};

struct Grant {
  std::string handle;
  std::vector<std::pair<std::string, std::uint64_t>> tokens;  // per key
};

void run_seed(std::uint64_t seed, int steps, std::uint64_t& multi_grants) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  TokenWatch watch;
  LockTable table(&watch);
  Millis now = 1'000'000;
  std::map<std::string, std::deque<WaiterId>> queues;
  std::map<WaiterId, Pending> pending;
  std::vector<Grant> grants;  // live as far as the model knows (some may have ended)

  auto mode_for = [&](const std::string& key, KeyRequest& k) {
    if (key == "s") {
      k.mode = LockMode::kSemaphore;
      k.permits = kLimit;
      k.take = 1 + static_cast<std::uint32_t>(pick(kLimit));
    } else {
      k.mode = pick(2) ? LockMode::kShared : LockMode::kExclusive;
    }
  };
  auto holds_token = [&](const std::string& key, std::uint64_t token) {
    const StatusView st = *table.status(key, now);
    if (!st.held) return false;
    if (st.holders.empty()) return st.hold.token == token;
    return std::any_of(st.holders.begin(), st.holders.end(),
                       [&](const HoldState& h) { return h.token == token; });
  };
  auto forget = [&](WaiterId id) {
    for (const std::string& key : pending[id].keys) std::erase(queues[key], id);
    pending.erase(id);
  };
  auto absorb = [&] {
    for (const WaiterOutcome& o : table.take_outcomes()) {
      auto it = pending.find(o.waiter);
      ASSERT_NE(it, pending.end()) << "an outcome for a waiter that is not waiting: " << o.waiter;
      if (o.granted) {
        for (const std::string& key : it->second.keys) {
          ASSERT_FALSE(queues[key].empty());
          EXPECT_EQ(queues[key].front(), o.waiter) << "overtook a waiter on " << key;
        }
        Grant g;
        if (o.multi) {
          ASSERT_EQ(o.group.holds.size(), it->second.keys.size()) << "a partial group grant";
          g.handle = o.group.handle.to_string();
          for (const HoldState& h : o.group.holds) g.tokens.emplace_back(h.key, h.token);
          ++multi_grants;
        } else {
          g.handle = o.hold.handle.to_string();
          g.tokens.emplace_back(o.hold.key, o.hold.token);
        }
        grants.push_back(std::move(g));
      }
      forget(o.waiter);
    }
  };
  auto check = [&] {
    for (const std::string& key : kKeys) {
      const StatusView st = *table.status(key, now);
      EXPECT_EQ(st.waiters, queues[key].size()) << "key " << key;
      if (st.held && st.mode == LockMode::kExclusive) {
        EXPECT_TRUE(st.holders.empty());
      }
      if (st.held && st.mode == LockMode::kShared) {
        for (const HoldState& h : st.holders) EXPECT_EQ(h.mode, LockMode::kShared);
      }
      if (st.held && st.mode == LockMode::kSemaphore) {
        std::uint32_t used = 0;
        for (const HoldState& h : st.holders) used += h.take;
        EXPECT_LE(used, kLimit) << "key " << key;
        EXPECT_EQ(st.free_permits, kLimit - used);
      }
      // A free key's first waiter can only be a multi-key one still missing another key.
      if (!st.held && !queues[key].empty()) {
        const Pending& head = pending[queues[key].front()];
        EXPECT_TRUE(head.multi) << "free key " << key << " keeps a single waiter waiting";
        const bool ready = std::all_of(head.keys.begin(), head.keys.end(), [&](const auto& k) {
          return queues[k].front() == queues[key].front() && !table.status(k, now)->held;
        });
        EXPECT_FALSE(ready) << "a multi-key waiter heads free keys and is not granted";
      }
    }
    // All or nothing, for as long as a group lives.
    std::erase_if(grants, [&](const Grant& g) {
      std::size_t there = 0;
      for (const auto& [key, token] : g.tokens) there += holds_token(key, token) ? 1 : 0;
      EXPECT_TRUE(there == 0 || there == g.tokens.size())
          << "group " << g.handle << " holds " << there << " of " << g.tokens.size() << " keys";
      return there == 0;
    });
    EXPECT_EQ(table.waiter_count(), [&] {
      std::size_t legs = 0;
      for (const auto& [id, p] : pending) legs += p.keys.size();
      return legs;
    }());
  };

  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const std::size_t op = pick(10);
    if (op <= 1) {  // one key, any mode; acquire or try; sometimes an owner (re-take)
      const std::string key = kKeys[pick(kKeys.size())];
      KeyRequest k;
      mode_for(key, k);
      AcquireRequest r;
      r.key = key;
      r.mode = k.mode;
      r.take = k.take;
      r.permits = k.permits;
      r.ttl_ms = 1 + static_cast<Millis>(pick(40));
      r.timeout_ms = pick(3) == 0 ? 0 : 1 + static_cast<Millis>(pick(60));
      const std::string held_by = pick(2) ? "user:u" : "user:v";
      r.held_by = held_by;
      const std::string owner = "o";
      if (pick(3) == 0) r.owner = owner;
      r.session = 1 + pick(4);
      const StatusView before = *table.status(key, now);
      auto out = table.acquire(r, now);
      ASSERT_TRUE(out.ok()) << out.error().message;
      if (out->kind == AcquireOutcome::Kind::kGranted) {
        const bool retake =
            (r.owner && std::any_of(before.holders.begin(), before.holders.end(),
                                    [&](const HoldState& h) {
                                      return h.held_by == held_by && h.owner == owner;
                                    })) ||
            (r.owner && before.held && before.holders.empty() && before.hold.held_by == held_by &&
             before.hold.owner == owner);
        EXPECT_TRUE(queues[key].empty() || retake) << "barged past a waiter on " << key;
        grants.push_back(Grant{out->hold.handle.to_string(), {{key, out->hold.token}}});
      } else if (out->kind == AcquireOutcome::Kind::kQueued) {
        pending[out->waiter] = Pending{{key}, r.session, false};
        queues[key].push_back(out->waiter);
      }
    } else if (op <= 3) {  // several keys, a mode each; acquire or try
      std::vector<std::string> keys = kKeys;
      std::shuffle(keys.begin(), keys.end(), rng);
      keys.resize(2 + pick(3));
      std::sort(keys.begin(), keys.end());
      AcquireAllRequest r;
      for (const std::string& key : keys) {
        KeyRequest k;
        k.key = key;
        mode_for(key, k);
        r.keys.push_back(k);
      }
      r.ttl_ms = 1 + static_cast<Millis>(pick(40));
      r.timeout_ms = pick(4) == 0 ? 0 : 1 + static_cast<Millis>(pick(80));
      r.held_by = pick(2) ? "user:u" : "user:w";
      r.session = 1 + pick(4);
      r.session_scoped = pick(4) == 0;
      auto out = table.acquire_all(r, now);
      ASSERT_TRUE(out.ok()) << out.error().message;
      if (out->kind == AcquireOutcome::Kind::kGranted) {
        for (const std::string& key : keys)
          EXPECT_TRUE(queues[key].empty()) << "barged past a waiter on " << key;
        ASSERT_EQ(out->group.holds.size(), keys.size());
        Grant g{out->group.handle.to_string(), {}};
        for (const HoldState& h : out->group.holds) g.tokens.emplace_back(h.key, h.token);
        grants.push_back(std::move(g));
        ++multi_grants;
      } else if (out->kind == AcquireOutcome::Kind::kQueued) {
        pending[out->waiter] = Pending{keys, r.session, true};
        for (const std::string& key : keys) queues[key].push_back(out->waiter);
      }
    } else if (op == 4 && !grants.empty()) {  // release by any key of a grant, maybe ended
      const Grant& g = grants[pick(grants.size())];
      const std::string key = g.tokens[pick(g.tokens.size())].first;
      ASSERT_TRUE(table.release(key, g.handle, now).ok());
    } else if (op == 5 && !grants.empty()) {  // renew by any key
      const Grant& g = grants[pick(grants.size())];
      const std::string key = g.tokens[pick(g.tokens.size())].first;
      ASSERT_TRUE(table.renew(key, g.handle, 1 + static_cast<Millis>(pick(40)), now).ok());
    } else if (op == 6) {  // the session ends: its waiters leave without an outcome
      const SessionId s = 1 + pick(4);
      std::vector<WaiterId> gone;
      for (const auto& [id, p] : pending)
        if (p.session == s) gone.push_back(id);
      table.end_session(s, now);
      for (WaiterId id : gone) forget(id);
    } else if (op == 7 && !pending.empty()) {  // one waiter gives up
      auto it = pending.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(pick(pending.size())));
      const WaiterId id = it->first;
      table.cancel_waiter(id, now);
      forget(id);
    } else if (op == 8 && pick(4) == 0) {  // DEL
      table.force_release(kKeys[pick(kKeys.size())], now);
    } else {  // time passes
      now += static_cast<Millis>(pick(25));
      table.advance(now);
    }
    absorb();
    if (::testing::Test::HasFatalFailure()) return;
    check();
    if (::testing::Test::HasFailure()) return;
  }
  now += 1'000'000;
  table.advance(now);
  absorb();
  EXPECT_TRUE(pending.empty()) << "waiters never decided";
  EXPECT_EQ(table.waiter_count(), 0u);
  EXPECT_EQ(table.held_count(), 0u);
}

TEST(LockTableMultiProperty, RandomSequencesKeepEveryPromise) {
  std::uint64_t multi_grants = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    run_seed(seed, 400, multi_grants);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "failed with seed " << seed;
      return;
    }
  }
  EXPECT_GT(multi_grants, 500u) << "the sequences must exercise multi-key grants";
}

}  // namespace multi_property
}  // namespace
}  // namespace holdfast
