// The value store beside the lock table: Redis's expiry with a fake clock (passive at the very
// millisecond, active through advance()), and the log's fidelity: random command sequences,
// whose reported edits, applied to nothing but themselves (as replay does), must rebuild every
// value exactly.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/values/value_store.h"
#include "values_test_support.h"

namespace holdfast {
namespace {

using testing::Request;
using testing::texts;

TEST(ValueStoreExpiry, AReadAtTheInstantFindsNothing) {
  ValueStore store;
  ASSERT_TRUE(store.run(Request(ValueOp::kIncrBy).integers(1), 100).ok());
  store.set_expiry("k", 150);
  EXPECT_TRUE(store.contains("k", 149));
  EXPECT_FALSE(store.contains("k", 150));
  EXPECT_TRUE(store.empty());
}

TEST(ValueStoreExpiry, AdvanceDropsDueValuesAndTheNextDeadlineFollows) {
  ValueStore store;
  for (const char* key : {"a", "b", "c"}) {
    ASSERT_TRUE(store.run(Request(ValueOp::kPush, key, {"x"}), 0).ok());
  }
  store.set_expiry("a", 30);
  store.set_expiry("b", 10);
  EXPECT_EQ(store.next_deadline(), 10);
  store.advance(10);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.next_deadline(), 30);
  store.set_expiry("a", kNever);  // PERSIST
  EXPECT_FALSE(store.next_deadline());
  store.advance(1000);
  EXPECT_EQ(store.size(), 2u);
}

TEST(ValueStoreExpiry, AValueMadeAfterExpiryStartsFreshWithoutTheOldElements) {
  ValueStore store;
  ASSERT_TRUE(store.run(Request(ValueOp::kPush, "k", {"old"}), 0).ok());
  store.set_expiry("k", 5);
  auto out = store.run(Request(ValueOp::kPush, "k", {"new"}), 5);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->reply.integer, 1);
  EXPECT_TRUE(out->edits[0].fresh);
  EXPECT_EQ(store.find("k", 6)->expires_at, kNever);
}

TEST(ValueStoreExpiry, RestoreLeavesOutWhatExpiredMeanwhile) {
  ValueStore store;
  std::vector<DurableValue> values;
  values.push_back(DurableValue{"gone", Value{std::int64_t{1}}, 50});
  values.push_back(DurableValue{"kept", Value{std::int64_t{2}}, 500});
  store.restore(std::move(values), 100);
  EXPECT_FALSE(store.contains("gone", 100));
  ASSERT_TRUE(store.contains("kept", 100));
  EXPECT_EQ(store.next_deadline(), 500);
}

// Everything the store holds, printed, for comparing two stores.
std::map<std::string, std::string> dump(const ValueStore& store) {
  std::map<std::string, std::string> out;
  store.for_each([&](std::string_view key, const Value& v, Millis expires_at) {
    std::string text = std::string(type_name(v.type())) + "@" + std::to_string(expires_at) + ":";
    std::visit(
        [&](const auto& data) {
          using T = std::decay_t<decltype(data)>;
          if constexpr (std::is_same_v<T, std::int64_t>) {
            text += std::to_string(data);
          } else if constexpr (std::is_same_v<T, ZSet>) {
            for (const ZSet::Node* n : data)
              text += std::string(n->member()) + "=" + format_redis_double(n->score) + ",";
          } else if constexpr (std::is_same_v<T, Hash>) {
            std::map<std::string, std::string> sorted;
            data.for_each([&](std::string_view f, std::string_view val) {
              sorted[std::string(f)] = std::string(val);
            });
            for (const auto& [f, val] : sorted) text += f + "=" + val + ",";
          } else {
            for (std::size_t i = 0; i < data.size(); ++i) text += std::string(data.at(i)) + ",";
          }
        },
        v.data);
    out[std::string(key)] = text;
  });
  return out;
}

// run() with a check for a key that holds no value (the embedded backend's lock table): it is
// asked only there, and its error is the answer, with nothing made.
TEST(ValueStoreRun, TheAbsentCheckIsAskedOnlyWhereNoValueIs) {
  ValueStore store;
  int asked = 0;
  const auto refuse = [&] {
    ++asked;
    return std::optional<Error>(wrong_type());
  };
  auto out = store.run(Request(ValueOp::kPush, "k", {"x"}), 0, refuse);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kWrongType);
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(store.empty());
  ASSERT_TRUE(store.run(Request(ValueOp::kPush, "k", {"x"}), 0).ok());
  out = store.run(Request(ValueOp::kPush, "k", {"y"}), 0, refuse);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->reply.integer, 2);
  EXPECT_EQ(asked, 1);  // the key holds a value: not asked
  store.set_expiry("k", 10);
  out = store.run(Request(ValueOp::kLLen, "k"), 10, refuse);  // expired at 10: no value there
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(asked, 2);
  EXPECT_TRUE(store.empty());
}

TEST(ValueStoreLog, ReplayingTheEditsRebuildsEveryValue) {
  std::mt19937 rng(20261206);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> keys = {"z1", "z2", "h1", "l1", "c1"};
  const std::vector<std::string> words = {"a", "b", "c", "d", "e", ""};
  for (int round = 0; round < 200; ++round) {
    ValueStore live;
    std::map<std::string, ValueCell> replayed;
    Millis now = 0;
    for (int step = 0; step < 60; ++step) {
      now += pick(3);
      const std::string key = keys[static_cast<std::size_t>(pick(5))];
      std::vector<std::string> items;
      for (int i = pick(3) + 1; i > 0; --i)
        items.push_back(words[static_cast<std::size_t>(pick(6))]);
      std::optional<Request> r;
      switch (pick(12)) {
        case 0: {
          std::vector<double> scores;
          for (std::size_t i = 0; i < items.size(); ++i) scores.push_back(pick(5) - 2);
          r.emplace(ValueOp::kZAdd, key, items);
          r->with_scores(scores).flag(pick(2) ? kGt : 0u);
          break;
        }
        case 1:
          r.emplace(ValueOp::kZRem, key, items);
          break;
        case 2:
          r.emplace(ValueOp::kZRemRangeByScore, key);
          r->range(pick(5) - 2, pick(5) - 2);
          break;
        case 3:
          r.emplace(ValueOp::kZRemRangeByRank, key);
          r->integers(pick(4) - 2, pick(4) - 1);
          break;
        case 4:
          items.push_back(std::to_string(pick(9)));
          if (items.size() % 2 == 1) items.push_back("v");
          r.emplace(ValueOp::kHSet, key, items);
          break;
        case 5:
          r.emplace(ValueOp::kHDel, key, items);
          break;
        case 6:
          r.emplace(ValueOp::kPush, key, items);
          if (pick(2)) r->flag(kRight);
          break;
        case 7:
          r.emplace(ValueOp::kPop, key);
          r->flag(pick(2) ? kRight : 0u).flag(pick(2) ? kCount : 0u).integers(pick(3));
          break;
        case 8:
          r.emplace(ValueOp::kLRem, key, std::vector<std::string>{items[0]});
          r->integers(pick(5) - 2);
          break;
        case 9:
          r.emplace(ValueOp::kIncrBy, key);
          r->integers(pick(7) - 3);
          break;
        case 10:
          r.emplace(ValueOp::kHIncrBy, key, std::vector<std::string>{items[0]});
          r->integers(pick(3));
          break;
        default:
          // An expiry, set as the backends set it: on the value and as an edit.
          if (live.contains(key, now)) {
            const Millis at = now + pick(4);
            live.set_expiry(key, at);
            ValueEdit e;
            e.key = key;
            e.op = ValueEdit::Op::kExpire;
            e.number = at;
            apply_edit(e, replayed[key].value, replayed[key].expires_at);
          }
          continue;
      }
      auto out = live.run(*r, now);
      if (!out.ok()) {
        // Another type, or HINCRBY of a field that is not a number: nothing changed.
        EXPECT_TRUE(out.error().code == ErrorCode::kWrongType ||
                    out.error().message == "hash value is not an integer")
            << out.error().message;
        continue;
      }
      for (const ValueEdit& e : out->edits)
        apply_edit(e, replayed[e.key].value, replayed[e.key].expires_at);
    }
    ValueStore rebuilt;
    std::vector<DurableValue> values;
    for (auto& [key, cell] : replayed) {
      if (cell.value) values.push_back(DurableValue{key, std::move(*cell.value), cell.expires_at});
    }
    rebuilt.restore(std::move(values), now + 1);
    live.advance(now + 1);
    ASSERT_EQ(dump(rebuilt), dump(live)) << "round " << round;
  }
}

}  // namespace
}  // namespace holdfast
