// A typed-value command as the layers pass it on (docs/redis-locks.md, "Typed values"): the
// front end parses a command's arguments into a ValueRequest (so a bad number or flag is
// refused before the key is looked at, in Redis's order), the policy checks it, and a backend
// runs it through value_ops.h on the key's value.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/values/redis_numbers.h"

namespace holdfast {

enum class ValueOp : std::uint8_t {
  kIncrBy,  // INCR, INCRBY, DECR, DECRBY: `integer` is the increment; kDecrement words an
            // overflow as DECRBY does
  // Sorted sets.
  kZAdd,              // items: members, scores: one each; flags kNx...kIncr
  kZIncrBy,           // ZINCRBY: `score` the increment, items[0] the member
  kZRem,              // items: members
  kZCard,             //
  kZScore,            // items[0]
  kZRank,             // items[0]; kRev: ZREVRANK
  kZCount,            // range
  kZRange,            // by rank: integer..integer2; kByScore: range; kRev, kWithScores, kLimit
  kZRemRangeByScore,  // range
  kZRemRangeByRank,   // integer..integer2
  // Hashes.
  kHSet,     // items: field, value, field, value...
  kHGet,     // items[0]
  kHMGet,    // items: fields
  kHDel,     // items: fields
  kHExists,  // items[0]
  kHIncrBy,  // items[0] the field, `integer` the increment
  kHGetAll,  //
  kHLen,     //
  // Lists (kRight: the tail end).
  kPush,    // LPUSH, RPUSH: items pushed in order
  kPop,     // LPOP, RPOP: `integer` elements when kCount, else one (a bulk reply)
  kLRange,  // integer..integer2
  kLLen,    //
  kLRem,    // LREM integer items[0]
  kLIndex,  // integer
  // Any key, a lock's too (the backend routes them): TYPE, PTTL (TTL renders it in seconds),
  // GETDEL.
  kType,
  kPTtl,
  kGetDel,
};

// Flags, by what they mean for the op at hand.
enum ValueFlags : std::uint32_t {
  kNx = 1u << 0,  // ZADD
  kXx = 1u << 1,
  kGt = 1u << 2,
  kLt = 1u << 3,
  kCh = 1u << 4,
  kIncr = 1u << 5,
  kRev = 1u << 6,         // ZRANGE REV, ZREVRANK
  kWithScores = 1u << 7,  // ZRANGE, ZRANGEBYSCORE
  kByScore = 1u << 8,     // ZRANGE BYSCORE, ZRANGEBYSCORE
  kLimit = 1u << 9,       // LIMIT offset count given
  kRight = 1u << 10,      // RPUSH, RPOP
  kCount = 1u << 11,      // LPOP, RPOP with a count
  kDecrement = 1u << 12,  // DECR, DECRBY
};

// Views valid for the duration of the issuing call only (ValueRequestCopy keeps them).
struct ValueRequest {
  ValueOp op = ValueOp::kZCard;
  std::string_view key;
  std::uint32_t flags = 0;
  std::int64_t integer = 0;
  std::int64_t integer2 = 0;
  std::int64_t offset = 0;  // LIMIT
  std::int64_t limit = -1;  // LIMIT: negative, every match
  double score = 0;
  ScoreRange range;
  std::span<const std::string_view> items;
  std::span<const double> scores;

  bool has(ValueFlags f) const { return (flags & f) != 0; }
};

// Whether `op` may change what a key holds (the policy checks these as writes).
bool value_op_writes(ValueOp op);

// A ValueRequest that owns its strings, for a backend that runs it after the call returned.
class ValueRequestCopy {
 public:
  explicit ValueRequestCopy(const ValueRequest& r);
  ValueRequestCopy(const ValueRequestCopy& other) : ValueRequestCopy(other.request()) {}
  ValueRequestCopy& operator=(const ValueRequestCopy&) = delete;
  const ValueRequest& request() const { return request_; }

 private:
  std::string key_;
  std::vector<std::string> items_;
  std::vector<std::string_view> views_;
  std::vector<double> scores_;
  ValueRequest request_;
};

}  // namespace holdfast
