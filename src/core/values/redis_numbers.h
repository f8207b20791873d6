// Numbers as Redis 7.0 reads and writes them, so that typed-value commands accept, refuse and
// print exactly what Redis does (the differential test in tests/redis_diff holds them to a real
// redis-server):
//  - integers (INCRBY's increment, a counter's value, ranks and counts): Redis's string2ll, a
//    decimal without sign '+', leading zeros, spaces or "-0", within 64 bits;
//  - scores (ZADD, ZINCRBY): Redis's string2d, strtod in the C locale over the whole argument
//    ("1e3", "inf", "0x10" are numbers; leading spaces, NaN and values that overflow are not);
//  - score bounds (ZCOUNT, ZRANGEBYSCORE...): zslParseRange, strtod up to the first NUL with an
//    optional '(' for an exclusive bound (so "" is 0 and "1e999" is inf there);
//  - printed scores: "%.17g", with "inf" and "-inf" (addReplyDouble).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace holdfast {

std::optional<std::int64_t> parse_redis_integer(std::string_view text);
// A decimal integer of at most 15 digits with an optional '-': the double strtod reads from
// it (each is exactly a double; "-0" is -0.0), without strtod's cost. nullopt for anything
// else (spaces, '+', a fraction, an exponent, hex...), which the caller leaves to strtod.
std::optional<double> small_decimal(std::string_view text);
std::optional<double> parse_redis_score(std::string_view text);

struct ScoreBound {
  double value = 0;
  bool exclusive = false;
};
std::optional<ScoreBound> parse_score_bound(std::string_view text);

// min to max, each end inclusive or not.
struct ScoreRange {
  ScoreBound min, max;
  bool above_min(double score) const {
    return min.exclusive ? score > min.value : score >= min.value;
  }
  bool below_max(double score) const {
    return max.exclusive ? score < max.value : score <= max.value;
  }
  bool contains(double score) const { return above_min(score) && below_max(score); }
  // No score can be inside.
  bool empty() const {
    return min.value > max.value || (min.value == max.value && (min.exclusive || max.exclusive));
  }
};

std::string format_redis_double(double value);

// The sum, or nullopt when it leaves 64 bits.
std::optional<std::int64_t> add_checked(std::int64_t a, std::int64_t b);

}  // namespace holdfast
