// Randomized test of shared, exclusive and semaphore holds, re-takes by owner included: random
// operations against the LockTable and a naive model (per key: a list of holds and a FIFO list of
// waiters; time moves one millisecond at a time). After every step the two must agree on every
// key's holds and every waiter's fate, no key may have more holds than its mode allows, and tokens
// only grow.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>

#include "core/lock_table.h"

namespace holdfast {
namespace {
namespace modes_model {

constexpr std::uint32_t kLimit = 3;  // the semaphore key's permits

struct ModelHold {
  std::string handle;  // "?" until the table's outcome names it
  WaiterId waiter = 0;
  std::string held_by;
  std::string owner;
  LockMode mode;
  std::uint32_t take;
  Millis expires;
  SessionId session;
};

struct ModelWaiter {
  WaiterId id;
  std::string held_by;
  std::string owner;
  LockMode mode;
  std::uint32_t take;
  Millis ttl;
  Millis deadline;
  SessionId session;
};

struct ModelKey {
  std::vector<ModelHold> holds;
  std::deque<ModelWaiter> waiters;

  bool fits(LockMode mode, std::uint32_t take) const {
    switch (mode) {
      case LockMode::kExclusive:
        return holds.empty();
      case LockMode::kShared:
        return std::all_of(holds.begin(), holds.end(),
                           [](const ModelHold& h) { return h.mode == LockMode::kShared; });
      case LockMode::kSemaphore: {
        std::uint32_t used = 0;
        for (const ModelHold& h : holds) used += h.take;
        return used + take <= kLimit;
      }
    }
    return false;
  }
};

class Recorder : public ChangeSink {
 public:
  void on_change(const Change& c) override {
    if (const auto* g = std::get_if<Granted>(&c)) {
      EXPECT_GT(g->hold.token, last_token[g->hold.key]) << "tokens must only grow per key";
      last_token[g->hold.key] = g->hold.token;
    }
  }
  std::map<std::string, std::uint64_t> last_token;
};

struct Model {
  std::map<std::string, ModelKey> keys;
  std::map<WaiterId, bool> fates;  // decided since the table's outcomes were last taken

  void hand_off(ModelKey& k, Millis now) {
    while (!k.waiters.empty()) {
      const ModelWaiter& w = k.waiters.front();
      if (w.deadline <= now) {
        fates[w.id] = false;
        k.waiters.pop_front();
        continue;
      }
      if (!k.fits(w.mode, w.take)) return;
      fates[w.id] = true;
      k.holds.push_back({"?", w.id, w.held_by, w.owner, w.mode, w.take, now + w.ttl, w.session});
      k.waiters.pop_front();
    }
  }

  // Ends the leases that are over and times out the waiters whose deadline came, then hands
  // each key to the waiters that fit, in order: what advance(now) reaches in any order.
  void settle(Millis now) {
    for (auto& [key, k] : keys) {
      std::erase_if(k.holds, [now](const ModelHold& h) { return h.expires <= now; });
      std::erase_if(k.waiters, [&](const ModelWaiter& w) {
        if (w.deadline > now) return false;
        fates[w.id] = false;
        return true;
      });
      hand_off(k, now);
    }
  }
};

TEST(LockTableModesModel, RandomSequencesAgreeWithTheModel) {
  const std::vector<std::string> keys = {"a", "b", "s"};  // "s" is the semaphore
  std::uint64_t grants_seen = 0;
  for (int seed = 0; seed < 300; ++seed) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    Recorder recorder;
    LockTable table(&recorder);
    Model model;
    Millis now = 1'000'000;
    std::vector<std::pair<std::string, std::string>> known;  // (key, handle), some stale

    auto absorb = [&]() {
      for (const WaiterOutcome& o : table.take_outcomes()) {
        auto fate = model.fates.find(o.waiter);
        ASSERT_NE(fate, model.fates.end())
            << "seed " << seed << ": table decided waiter " << o.waiter << " the model did not";
        EXPECT_EQ(fate->second, o.granted) << "seed " << seed << " waiter " << o.waiter;
        model.fates.erase(fate);
        if (!o.granted) continue;
        ++grants_seen;
        known.emplace_back(o.key, o.hold.handle.to_string());
        for (ModelHold& h : model.keys[o.key].holds)
          if (h.waiter == o.waiter) h.handle = o.hold.handle.to_string();
      }
      EXPECT_TRUE(model.fates.empty())
          << "seed " << seed << ": model decided a waiter the table did not";
      model.fates.clear();
    };

    auto check = [&]() {
      for (const std::string& key : keys) {
        const ModelKey& mk = model.keys[key];
        auto st = table.status(key, now);
        ASSERT_TRUE(st.ok());
        ASSERT_EQ(st->held, !mk.holds.empty()) << "seed " << seed << " key " << key;
        EXPECT_EQ(st->waiters, mk.waiters.size()) << "seed " << seed << " key " << key;
        if (!st->held) continue;
        std::size_t holders = st->holders.empty() ? 1 : st->holders.size();
        ASSERT_EQ(holders, mk.holds.size()) << "seed " << seed << " key " << key;
        // Never more holds than the mode allows.
        if (st->mode == LockMode::kExclusive) {
          EXPECT_EQ(holders, 1u);
        }
        if (st->mode == LockMode::kSemaphore) {
          std::uint32_t used = 0;
          for (const HoldState& h : st->holders) used += h.take;
          EXPECT_LE(used, kLimit);
          EXPECT_EQ(st->free_permits, kLimit - used);
        }
        for (const ModelHold& h : mk.holds) EXPECT_EQ(h.mode, st->mode) << "seed " << seed;
      }
    };

    for (int step = 0; step < 200; ++step) {
      const std::string& key = keys[pick(keys.size())];
      ModelKey& mk = model.keys[key];
      switch (pick(6)) {
        case 0:
        case 1: {  // acquire or try, in a mode the key allows
          AcquireRequest r;
          r.key = key;
          r.ttl_ms = 1 + static_cast<Millis>(pick(30));
          r.timeout_ms = pick(3) == 0 ? 0 : 1 + static_cast<Millis>(pick(50));
          const std::string held_by = pick(2) ? "user:u" : "user:v";
          const std::string owner = pick(2) ? "" : "o";
          r.held_by = held_by;
          if (!owner.empty()) r.owner = owner;
          r.session = 1 + pick(4);
          if (key == "s") {
            r.mode = LockMode::kSemaphore;
            r.permits = kLimit;
            r.take = 1 + static_cast<std::uint32_t>(pick(kLimit));
          } else {
            r.mode = pick(2) ? LockMode::kShared : LockMode::kExclusive;
          }
          auto out = table.acquire(r, now);
          ASSERT_TRUE(out.ok());
          const std::uint32_t take = r.mode == LockMode::kSemaphore ? r.take : 1;
          // Re-take: the oldest hold of the same principal, owner and mode is replaced at
          // once, whoever waits (a semaphore's only if the new permits fit in its place).
          auto same = mk.holds.end();
          if (!owner.empty()) {
            same = std::find_if(mk.holds.begin(), mk.holds.end(), [&](const ModelHold& h) {
              return h.held_by == held_by && h.owner == owner && h.mode == r.mode;
            });
          }
          bool retake = same != mk.holds.end();
          if (retake && r.mode == LockMode::kSemaphore) {
            std::uint32_t used = 0;
            for (const ModelHold& h : mk.holds) used += h.take;
            retake = used - same->take + take <= kLimit;
          }
          if (retake) {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kGranted) << "seed " << seed << " re-take";
            mk.holds.erase(same);
            mk.holds.push_back(
                {out->hold.handle.to_string(), 0, held_by, owner, r.mode, take, now + r.ttl_ms, 0});
            known.emplace_back(key, out->hold.handle.to_string());
            ++grants_seen;
            model.hand_off(mk, now);
          } else if (mk.waiters.empty() && mk.fits(r.mode, take)) {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kGranted) << "seed " << seed;
            EXPECT_EQ(out->hold.mode, r.mode);
            mk.holds.push_back(
                {out->hold.handle.to_string(), 0, held_by, owner, r.mode, take, now + r.ttl_ms, 0});
            known.emplace_back(key, out->hold.handle.to_string());
            ++grants_seen;
          } else if (r.timeout_ms == 0) {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kContended) << "seed " << seed;
          } else {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kQueued) << "seed " << seed;
            mk.waiters.push_back({out->waiter, held_by, owner, r.mode, take, r.ttl_ms,
                                  now + r.timeout_ms, r.session});
          }
          break;
        }
        case 2: {  // release a known handle (maybe stale)
          if (known.empty()) break;
          const auto& [k, handle] = known[pick(known.size())];
          ModelKey& owner = model.keys[k];
          auto out = table.release(k, handle, now);
          ASSERT_TRUE(out.ok());
          auto it = std::find_if(owner.holds.begin(), owner.holds.end(),
                                 [&](const ModelHold& h) { return h.handle == handle; });
          EXPECT_EQ(out->released, it != owner.holds.end()) << "seed " << seed;
          if (it != owner.holds.end()) {
            owner.holds.erase(it);
            model.hand_off(owner, now);
          }
          break;
        }
        case 3: {  // a connection ends: its waiters leave
          SessionId s = 1 + pick(4);
          table.end_session(s, now);
          for (auto& [k2, m2] : model.keys) {
            if (std::erase_if(m2.waiters, [&](const ModelWaiter& w) { return w.session == s; }))
              model.hand_off(m2, now);
          }
          break;
        }
        default: {  // time passes
          const int ms = 1 + static_cast<int>(pick(12));
          for (int i = 0; i < ms; ++i) {
            ++now;
            table.advance(now);
            model.settle(now);
            absorb();
          }
          break;
        }
      }
      absorb();
      check();
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(grants_seen, 10000u);
}

}  // namespace modes_model
}  // namespace
}  // namespace holdfast
