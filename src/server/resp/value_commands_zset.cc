// The sorted-set commands' arguments, read as Redis 7.0's t_zset.c reads them: flags first,
// then the numbers (scores, bounds, ranks), every refusal before the key is looked at.
#include <vector>

#include "server/resp/value_command_support.h"

namespace holdfast::resp {

using value_cmd::not_an_integer;
using value_cmd::refuse;
using value_cmd::request;
using value_cmd::syntax_error;

namespace {

Issued not_a_float(Completion& d) { return refuse(d, "value is not a valid float"); }
Issued bounds_not_floats(Completion& d) { return refuse(d, "min or max is not a float"); }

// min and max as a score range; false when either is not one.
bool read_range(std::string_view min, std::string_view max, ScoreRange& range) {
  const auto lo = parse_score_bound(min);
  const auto hi = parse_score_bound(max);
  if (!lo || !hi) return false;
  range = ScoreRange{*lo, *hi};
  return true;
}

// ZRANGE and ZRANGEBYSCORE: Redis's zrangeGenericCommand. `by_score_only`: ZRANGEBYSCORE,
// which takes neither REV nor BYSCORE nor BYLEX.
Issued zrange(LockService& s, const Caller& c, const CallArgs& a, Completion& d,
              bool by_score_only) {
  const auto args = a.positional;
  ValueRequest r = request(ValueOp::kZRange, a);
  r.items = {};
  bool rev = false, by_lex = false, limit_given = false;
  bool by_score = by_score_only;
  for (std::size_t j = 3; j < args.size(); ++j) {
    const std::string_view word = args[j];
    const std::size_t left = args.size() - j - 1;
    if (ascii_iequals(word, "WITHSCORES")) {
      r.flags |= kWithScores;
    } else if (ascii_iequals(word, "LIMIT") && left >= 2) {
      const auto offset = parse_redis_integer(args[j + 1]);
      const auto count = parse_redis_integer(args[j + 2]);
      if (!offset || !count) return not_an_integer(d);
      r.offset = *offset;
      r.limit = *count;
      limit_given = true;
      j += 2;
    } else if (!by_score_only && !rev && ascii_iequals(word, "REV")) {
      rev = true;
    } else if (!by_score_only && !by_score && !by_lex && ascii_iequals(word, "BYLEX")) {
      by_lex = true;
    } else if (!by_score_only && !by_score && !by_lex && ascii_iequals(word, "BYSCORE")) {
      by_score = true;
    } else {
      return syntax_error(d);
    }
  }
  // Redis takes a LIMIT whose count is -1 for no LIMIT at all.
  if (limit_given && r.limit != -1 && !by_score && !by_lex)
    return refuse(d,
                  "syntax error, LIMIT is only supported in combination with either BYSCORE or "
                  "BYLEX");
  if (r.has(kWithScores) && by_lex)
    return refuse(d, "syntax error, WITHSCORES not supported in combination with BYLEX");
  if (by_lex) return refuse(d, "BYLEX is not supported: members are ranged by score or rank");
  if (rev) r.flags |= kRev;
  if (limit_given) r.flags |= kLimit;
  // With REV a score range is given as max, min.
  std::string_view first = args[1], second = args[2];
  if (rev && by_score) std::swap(first, second);
  if (by_score) {
    r.flags |= kByScore;
    if (!read_range(first, second, r.range)) return bounds_not_floats(d);
  } else {
    const auto start = parse_redis_integer(first);
    const auto stop = parse_redis_integer(second);
    if (!start || !stop) return not_an_integer(d);
    r.integer = *start;
    r.integer2 = *stop;
  }
  return s.value(c, r, d);
}

}  // namespace

Issued call_zadd(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  const auto args = a.positional;
  std::uint32_t flags = 0;
  std::size_t first = 1;
  for (; first < args.size(); ++first) {
    const std::string_view word = args[first];
    if (ascii_iequals(word, "NX")) {
      flags |= kNx;
    } else if (ascii_iequals(word, "XX")) {
      flags |= kXx;
    } else if (ascii_iequals(word, "CH")) {
      flags |= kCh;
    } else if (ascii_iequals(word, "INCR")) {
      flags |= kIncr;
    } else if (ascii_iequals(word, "GT")) {
      flags |= kGt;
    } else if (ascii_iequals(word, "LT")) {
      flags |= kLt;
    } else {
      break;
    }
  }
  const std::size_t elements = args.size() - first;
  if (elements == 0 || elements % 2 != 0) return syntax_error(d);
  const auto has = [&](std::uint32_t f) { return (flags & f) != 0; };
  if (has(kXx) && has(kNx))
    return refuse(d, "XX and NX options at the same time are not compatible");
  if ((has(kGt) && has(kNx)) || (has(kLt) && has(kNx)) || (has(kGt) && has(kLt)))
    return refuse(d, "GT, LT, and/or NX options at the same time are not compatible");
  if (has(kIncr) && elements > 2)
    return refuse(d, "INCR option supports a single increment-element pair");
  std::vector<double> scores;
  std::vector<std::string_view> members;
  scores.reserve(elements / 2);
  members.reserve(elements / 2);
  for (std::size_t i = first; i < args.size(); i += 2) {
    const auto score = parse_redis_score(args[i]);
    if (!score) return not_a_float(d);
    scores.push_back(*score);
    members.push_back(args[i + 1]);
  }
  ValueRequest r = request(ValueOp::kZAdd, a);
  r.flags = flags;
  r.items = members;
  r.scores = scores;
  return s.value(c, r, d);
}

Issued call_zincrby(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  const auto by = parse_redis_score(a.positional[1]);
  if (!by) return not_a_float(d);
  ValueRequest r = request(ValueOp::kZIncrBy, a);
  r.score = *by;
  r.items = a.positional.subspan(2);
  return s.value(c, r, d);
}

Issued call_zrevrank(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  ValueRequest r = request(ValueOp::kZRank, a);
  r.flags |= kRev;
  return s.value(c, r, d);
}

Issued call_zcount(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  ValueRequest r = request(ValueOp::kZCount, a);
  if (!read_range(a.positional[1], a.positional[2], r.range)) return bounds_not_floats(d);
  r.items = {};
  return s.value(c, r, d);
}

Issued call_zrange(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return zrange(s, c, a, d, /*by_score_only=*/false);
}

Issued call_zrangebyscore(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  return zrange(s, c, a, d, /*by_score_only=*/true);
}

Issued call_zremrangebyscore(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  ValueRequest r = request(ValueOp::kZRemRangeByScore, a);
  if (!read_range(a.positional[1], a.positional[2], r.range)) return bounds_not_floats(d);
  r.items = {};
  return s.value(c, r, d);
}

Issued call_zremrangebyrank(LockService& s, const Caller& c, const CallArgs& a, Completion& d) {
  const auto start = parse_redis_integer(a.positional[1]);
  const auto stop = parse_redis_integer(a.positional[2]);
  if (!start || !stop) return not_an_integer(d);
  ValueRequest r = request(ValueOp::kZRemRangeByRank, a);
  r.integer = *start;
  r.integer2 = *stop;
  r.items = {};
  return s.value(c, r, d);
}

}  // namespace holdfast::resp
