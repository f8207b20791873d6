// The typed-value operations on one key's value: Redis's semantics command by command, the
// errors that change nothing, and the limits. (tests/redis_diff holds the same commands to a
// real redis-server through the whole server.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/values/limits.h"
#include "core/values/value_ops.h"
#include "values_test_support.h"

namespace holdfast {
namespace {

using testing::Request;
using testing::texts;

ValueReply run_ok(const Request& r, ValueCell& cell) {
  auto out = run_value_op(r, cell);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return out.ok() ? out->reply : ValueReply{};
}

std::string error_of(const Request& r, ValueCell& cell) {
  auto out = run_value_op(r, cell);
  return out.ok() ? "" : out.error().message;
}

Request zadd(std::vector<std::string> members, std::vector<double> scores,
             std::uint32_t flags = 0) {
  Request r(ValueOp::kZAdd, "k", std::move(members));
  r.with_scores(std::move(scores)).flag(flags);
  return r;
}

TEST(CounterOps, IncrementsFromZeroAndRefusesOverflowWithoutChanging) {
  ValueCell cell;
  EXPECT_EQ(run_ok(Request(ValueOp::kIncrBy).integers(-7), cell).integer, -7);
  EXPECT_EQ(run_ok(Request(ValueOp::kIncrBy).integers(9), cell).integer, 2);
  Request big(ValueOp::kIncrBy);
  big.integers(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(error_of(big, cell), "increment or decrement would overflow");
  EXPECT_EQ(std::get<std::int64_t>(cell.value->data), 2);
}

TEST(CounterOps, ReportsTheNewValueAndWhetherTheKeyWasEmpty) {
  ValueCell cell;
  auto first = run_value_op(Request(ValueOp::kIncrBy).integers(1), cell);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->edits.size(), 1u);
  EXPECT_TRUE(first->edits[0].fresh);
  EXPECT_EQ(first->edits[0].number, 1);
  auto second = run_value_op(Request(ValueOp::kIncrBy).integers(1), cell);
  EXPECT_FALSE(second->edits[0].fresh);
}

TEST(ValueOps, AnotherTypeIsWrongType) {
  ValueCell cell;
  run_ok(Request(ValueOp::kPush, "k", {"a"}), cell);
  auto out = run_value_op(zadd({"m"}, {1}), cell);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kWrongType);
  EXPECT_EQ(out.error().message, "Operation against a key holding the wrong kind of value");
  EXPECT_EQ(error_of(Request(ValueOp::kIncrBy).integers(1), cell),
            "Operation against a key holding the wrong kind of value");
  EXPECT_EQ(std::get<List>(cell.value->data).size(), 1u);
}

TEST(ZSetOps, AddCountsNewMembersAndChCountsChangedOnes) {
  ValueCell cell;
  EXPECT_EQ(run_ok(zadd({"a", "b"}, {1, 2}), cell).integer, 2);
  EXPECT_EQ(run_ok(zadd({"a", "c"}, {5, 3}), cell).integer, 1);
  EXPECT_EQ(run_ok(zadd({"a", "b", "d"}, {6, 2, 4}, kCh), cell).integer, 2);  // a moved, d new
  Request range(ValueOp::kZRange);
  range.integers(0, -1).flag(kWithScores);
  EXPECT_EQ(texts(run_ok(range, cell)),
            (std::vector<std::string>{"b", "2", "c", "3", "d", "4", "a", "6"}));
}

TEST(ZSetOps, NxXxGtLtDecideMemberByMember) {
  ValueCell cell;
  run_ok(zadd({"a", "b"}, {5, 5}), cell);
  EXPECT_EQ(run_ok(zadd({"a", "c"}, {1, 1}, kNx), cell).integer, 1);  // only c
  EXPECT_EQ(*std::get<ZSet>(cell.value->data).score("a"), 5);
  EXPECT_EQ(run_ok(zadd({"a", "z"}, {2, 2}, kXx | kCh), cell).integer, 1);  // only a
  EXPECT_FALSE(std::get<ZSet>(cell.value->data).score("z"));
  EXPECT_EQ(run_ok(zadd({"a", "b"}, {3, 9}, kGt | kCh), cell).integer, 2);   // both up
  EXPECT_EQ(run_ok(zadd({"a", "b"}, {1, 10}, kLt | kCh), cell).integer, 1);  // a down only
  EXPECT_EQ(*std::get<ZSet>(cell.value->data).score("a"), 1);
  EXPECT_EQ(*std::get<ZSet>(cell.value->data).score("b"), 9);
}

TEST(ZSetOps, XxOnAMissingKeyMakesNothing) {
  ValueCell cell;
  EXPECT_EQ(run_ok(zadd({"a"}, {1}, kXx), cell).integer, 0);
  EXPECT_FALSE(cell.value);
  EXPECT_EQ(run_ok(zadd({"a"}, {1}, kXx | kIncr), cell).kind, ValueReply::Kind::kNull);
}

TEST(ZSetOps, IncrAnswersTheNewScoreOrNilWhenNothingHappened) {
  ValueCell cell;
  EXPECT_EQ(run_ok(zadd({"a"}, {1.5}, kIncr), cell).number, 1.5);
  EXPECT_EQ(run_ok(zadd({"a"}, {2}, kIncr), cell).number, 3.5);
  EXPECT_EQ(run_ok(zadd({"a"}, {2}, kIncr | kNx), cell).kind, ValueReply::Kind::kNull);
  EXPECT_EQ(run_ok(zadd({"a"}, {-1}, kIncr | kGt), cell).kind, ValueReply::Kind::kNull);
  Request incrby(ValueOp::kZIncrBy, "k", {"b"});
  incrby.r.score = -2;
  EXPECT_EQ(run_ok(incrby, cell).number, -2);
}

TEST(ZSetOps, AnIncrementToNaNIsRefusedAndChangesNothing) {
  ValueCell cell;
  const double inf = std::numeric_limits<double>::infinity();
  run_ok(zadd({"a"}, {inf}), cell);
  EXPECT_EQ(error_of(zadd({"a"}, {-inf}, kIncr), cell), "resulting score is not a number (NaN)");
  EXPECT_EQ(*std::get<ZSet>(cell.value->data).score("a"), inf);
}

TEST(ZSetOps, RangesByScoreHonourExclusiveBoundsReverseAndLimit) {
  ValueCell cell;
  run_ok(zadd({"a", "b", "c", "d", "e"}, {1, 2, 2, 3, 4}), cell);
  Request count(ValueOp::kZCount);
  count.range(2, 3, /*min_ex=*/true);
  EXPECT_EQ(run_ok(count, cell).integer, 1);
  Request by_score(ValueOp::kZRange);
  by_score.flag(kByScore).range(2, 4);
  EXPECT_EQ(texts(run_ok(by_score, cell)), (std::vector<std::string>{"b", "c", "d", "e"}));
  by_score.flag(kRev | kLimit);
  by_score.r.offset = 1;
  by_score.r.limit = 2;
  EXPECT_EQ(texts(run_ok(by_score, cell)), (std::vector<std::string>{"d", "c"}));
  by_score.r.offset = -1;  // Redis skips everything
  EXPECT_TRUE(run_ok(by_score, cell).items.empty());
}

TEST(ZSetOps, RanksCountFromEitherEnd) {
  ValueCell cell;
  run_ok(zadd({"a", "b", "c"}, {1, 2, 3}), cell);
  EXPECT_EQ(run_ok(Request(ValueOp::kZRank, "k", {"c"}), cell).integer, 2);
  EXPECT_EQ(run_ok(Request(ValueOp::kZRank, "k", {"c"}).flag(kRev), cell).integer, 0);
  EXPECT_EQ(run_ok(Request(ValueOp::kZRank, "k", {"x"}), cell).kind, ValueReply::Kind::kNull);
  EXPECT_EQ(texts(run_ok(Request(ValueOp::kZRange).integers(-2, 100), cell)),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(texts(run_ok(Request(ValueOp::kZRange).integers(0, 0).flag(kRev), cell)),
            (std::vector<std::string>{"c"}));
}

TEST(ZSetOps, RemovingTheLastMemberDeletesTheKeyAndItsExpiry) {
  ValueCell cell;
  run_ok(zadd({"a", "b"}, {1, 2}), cell);
  cell.expires_at = 1000;
  EXPECT_EQ(run_ok(Request(ValueOp::kZRemRangeByScore).range(-1e9, 1.5), cell).integer, 1);
  EXPECT_EQ(run_ok(Request(ValueOp::kZRemRangeByRank).integers(0, -1), cell).integer, 1);
  EXPECT_FALSE(cell.value);
  EXPECT_EQ(cell.expires_at, kNever);
}

TEST(ZSetOps, TheElementLimitRefusesTheWholeCommand) {
  ValueCell cell;
  std::vector<std::string> members;
  std::vector<double> scores;
  for (std::size_t i = 0; i < kMaxValueElements; ++i) {
    members.push_back("m" + std::to_string(i));
    scores.push_back(static_cast<double>(i));
  }
  run_ok(zadd(members, scores), cell);
  EXPECT_NE(error_of(zadd({"m1", "new"}, {0, 0}), cell).find("at most 10000 elements"),
            std::string::npos);
  EXPECT_EQ(std::get<ZSet>(cell.value->data).size(), kMaxValueElements);
  EXPECT_EQ(*std::get<ZSet>(cell.value->data).score("m1"), 1);
  EXPECT_EQ(run_ok(zadd({"m1"}, {7}), cell).integer, 0);  // an existing member still moves
}

TEST(HashOps, SetCountsNewFieldsAndIncrByChecksTheStoredValue) {
  ValueCell cell;
  EXPECT_EQ(run_ok(Request(ValueOp::kHSet, "k", {"f", "1", "g", "x", "f", "2"}), cell).integer, 2);
  EXPECT_EQ(run_ok(Request(ValueOp::kHGet, "k", {"f"}), cell).text, "2");
  EXPECT_EQ(run_ok(Request(ValueOp::kHIncrBy, "k", {"f"}).integers(3), cell).integer, 5);
  EXPECT_EQ(error_of(Request(ValueOp::kHIncrBy, "k", {"g"}).integers(1), cell),
            "hash value is not an integer");
  EXPECT_EQ(run_ok(Request(ValueOp::kHIncrBy, "k", {"n"}).integers(-1), cell).integer, -1);
  EXPECT_EQ(run_ok(Request(ValueOp::kHLen), cell).integer, 3);
  EXPECT_EQ(texts(run_ok(Request(ValueOp::kHMGet, "k", {"f", "zz"}), cell)),
            (std::vector<std::string>{"5", ""}));
  EXPECT_EQ(run_ok(Request(ValueOp::kHMGet, "k", {"zz"}), cell).items[0].kind,
            ValueReply::Kind::kNull);
  EXPECT_EQ(run_ok(Request(ValueOp::kHDel, "k", {"f", "g", "n", "zz"}), cell).integer, 3);
  EXPECT_FALSE(cell.value);
}

TEST(ListOps, PushPopRangeRemoveAndIndex) {
  ValueCell cell;
  EXPECT_EQ(run_ok(Request(ValueOp::kPush, "k", {"a", "b"}), cell).integer, 2);  // b a
  EXPECT_EQ(run_ok(Request(ValueOp::kPush, "k", {"c", "a"}).flag(kRight), cell).integer, 4);
  EXPECT_EQ(texts(run_ok(Request(ValueOp::kLRange).integers(0, -1), cell)),
            (std::vector<std::string>{"b", "a", "c", "a"}));
  EXPECT_EQ(run_ok(Request(ValueOp::kLIndex).integers(-2), cell).text, "c");
  EXPECT_EQ(run_ok(Request(ValueOp::kLIndex).integers(9), cell).kind, ValueReply::Kind::kNull);
  EXPECT_EQ(run_ok(Request(ValueOp::kLRem, "k", {"a"}).integers(-1), cell).integer, 1);
  EXPECT_EQ(texts(run_ok(Request(ValueOp::kLRange).integers(0, -1), cell)),
            (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(run_ok(Request(ValueOp::kPop).flag(kRight), cell).text, "c");
  EXPECT_EQ(texts(run_ok(Request(ValueOp::kPop).flag(kCount).integers(5), cell)),
            (std::vector<std::string>{"b", "a"}));
  EXPECT_FALSE(cell.value);
  EXPECT_EQ(run_ok(Request(ValueOp::kPop).flag(kCount).integers(1), cell).kind,
            ValueReply::Kind::kNullArray);
  EXPECT_EQ(run_ok(Request(ValueOp::kPop), cell).kind, ValueReply::Kind::kNull);
}

}  // namespace
}  // namespace holdfast
