// Sorted sets: ZADD (and ZINCRBY, which is ZADD INCR), ZREM, ZCARD, ZSCORE, ZRANK, ZCOUNT,
// ZRANGE in its forms, ZREMRANGEBYSCORE, ZREMRANGEBYRANK, as Redis 7.0's t_zset.c answers them.
#include <cmath>
#include <iterator>

#include <absl/container/flat_hash_set.h>

#include "core/values/value_ops_internal.h"

namespace holdfast::value_ops {
namespace {

// How many members `r` would add to `z` (null: none yet), counting a member named twice once.
std::size_t new_members(const ZSet* z, const ValueRequest& r) {
  absl::flat_hash_set<std::string_view> seen;
  std::size_t n = 0;
  for (std::string_view m : r.items) {
    if ((z == nullptr || !z->score(m)) && seen.insert(m).second) ++n;
  }
  return n;
}

// ZADD and ZINCRBY (Redis's zsetAdd, member by member).
Result<ValueOutcome> zadd(const ValueRequest& r, ValueCell& cell) {
  auto found = typed<ZSet>(cell);
  if (!found.ok()) return std::move(found).error();
  ZSet* z = *found;
  const bool incr = r.op == ValueOp::kZIncrBy || r.has(kIncr);
  ValueOutcome out;
  if (z == nullptr && r.has(kXx)) {
    out.reply = incr ? ValueReply::null() : ValueReply::of_integer(0);
    return out;
  }
  const std::size_t size = z == nullptr ? 0 : z->size();
  if (!r.has(kXx) && size + r.items.size() > kMaxValueElements) {
    const std::size_t added = new_members(z, r);
    if (size + added > kMaxValueElements) return too_many_elements(size + added);
  }
  // INCR has one member: its new score, refused before anything changes when it is not a
  // number (unless NX leaves an existing member alone anyway, as in Redis).
  std::optional<double> incremented;
  if (incr) {
    const double by = r.op == ValueOp::kZIncrBy ? r.score : r.scores[0];
    const auto current = z == nullptr ? std::nullopt : z->score(r.items[0]);
    incremented = current && !r.has(kNx) ? *current + by : by;
    if (std::isnan(*incremented)) return score_not_a_number();
  }
  const bool fresh = z == nullptr;
  if (fresh) z = &create<ZSet>(cell);
  ValueEdit e = make_edit(r, ValueEdit::Op::kZSetPut, fresh);
  std::int64_t added = 0, updated = 0;
  bool processed = false;
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    const std::string_view member = r.items[i];
    double score = incremented ? *incremented : r.scores[i];
    const auto current = z->score(member);
    if (current) {
      if (r.has(kNx)) continue;
      if ((r.has(kGt) && score <= *current) || (r.has(kLt) && score >= *current)) continue;
      processed = true;
      if (score == *current) continue;
      z->put(member, score);
      ++updated;
    } else {
      if (r.has(kXx)) continue;
      processed = true;
      z->put(member, score);
      ++added;
    }
    e.items.emplace_back(member);
    e.scores.push_back(score);
  }
  if (r.op == ValueOp::kZIncrBy) {
    out.reply = ValueReply::of_double(*incremented);
  } else if (incr) {
    out.reply = processed ? ValueReply::of_double(*incremented) : ValueReply::null();
  } else {
    out.reply = ValueReply::of_integer(r.has(kCh) ? added + updated : added);
  }
  if (!e.items.empty()) out.edits.push_back(std::move(e));
  drop_if_empty(cell);  // ZADD NX ... on a new key that added nothing cannot happen, but stay safe
  return out;
}

// Appends the members of [first, last) (in reverse with kRev) to the reply, skipping `offset`
// and taking at most `limit` (negative: all).
void reply_members(const ValueRequest& r, ZSet::const_iterator first, ZSet::const_iterator last,
                   std::int64_t offset, std::int64_t limit, ValueReply& reply) {
  const bool scores = r.has(kWithScores);
  reply = ValueReply::of(scores ? ValueReply::Kind::kPairs : ValueReply::Kind::kArray);
  auto take = [&](const ZSet::Node* n) {
    if (offset > 0) {
      --offset;
      return;
    }
    if (limit == 0) return;
    if (limit > 0) --limit;
    reply.items.push_back(ValueReply::bulk(n->member()));
    if (scores) reply.items.push_back(ValueReply::of_double(n->score));
  };
  if (offset < 0) return;  // Redis skips everything
  if (r.has(kRev)) {
    for (auto it = last; it != first && limit != 0;) take(*--it);
  } else {
    for (auto it = first; it != last && limit != 0; ++it) take(*it);
  }
}

Result<ValueOutcome> zrange(const ValueRequest& r, const ZSet* z) {
  ValueOutcome out;
  out.reply =
      ValueReply::of(r.has(kWithScores) ? ValueReply::Kind::kPairs : ValueReply::Kind::kArray);
  if (z == nullptr) return out;
  if (r.has(kByScore)) {
    if (r.range.empty()) return out;
    reply_members(r, z->lower(r.range), z->upper(r.range), r.has(kLimit) ? r.offset : 0,
                  r.has(kLimit) ? r.limit : -1, out.reply);
    return out;
  }
  std::size_t first = 0, last = 0;
  if (!clamp_range(r.integer, r.integer2, z->size(), first, last)) return out;
  // REV counts ranks from the highest score.
  if (r.has(kRev)) {
    const std::size_t n = z->size();
    const std::size_t lo = n - 1 - last, hi = n - 1 - first;
    first = lo;
    last = hi;
  }
  const auto begin = z->at_rank(first);
  reply_members(r, begin, std::next(begin, static_cast<std::ptrdiff_t>(last - first + 1)), 0, -1,
                out.reply);
  return out;
}

// Removes [first, last) and reports the members that went.
ValueOutcome remove_span(const ValueRequest& r, ValueCell& cell, ZSet& z,
                         ZSet::const_iterator first, ZSet::const_iterator last) {
  ValueOutcome out;
  if (first == last) {  // the common ZREMRANGEBYSCORE of nothing expired: no edit to make
    out.reply = ValueReply::of_integer(0);
    return out;
  }
  ValueEdit e = make_edit(r, ValueEdit::Op::kZSetRemove, false);
  for (auto it = first; it != last; ++it) e.items.emplace_back((*it)->member());
  const std::size_t removed = z.erase(first, last);
  out.reply = ValueReply::of_integer(static_cast<std::int64_t>(removed));
  if (removed > 0) out.edits.push_back(std::move(e));
  drop_if_empty(cell);
  return out;
}

}  // namespace

Result<ValueOutcome> run_zset_op(const ValueRequest& r, ValueCell& cell) {
  if (r.op == ValueOp::kZAdd || r.op == ValueOp::kZIncrBy) return zadd(r, cell);
  auto found = typed<ZSet>(cell);
  if (!found.ok()) return std::move(found).error();
  ZSet* z = *found;
  ValueOutcome out;
  switch (r.op) {
    case ValueOp::kZRem: {
      std::int64_t removed = 0;
      ValueEdit e = make_edit(r, ValueEdit::Op::kZSetRemove, false);
      for (std::string_view m : r.items) {
        if (z != nullptr && z->remove(m)) {
          ++removed;
          e.items.emplace_back(m);
        }
      }
      out.reply = ValueReply::of_integer(removed);
      if (removed > 0) out.edits.push_back(std::move(e));
      drop_if_empty(cell);
      return out;
    }
    case ValueOp::kZCard:
      out.reply = ValueReply::of_integer(z == nullptr ? 0 : static_cast<std::int64_t>(z->size()));
      return out;
    case ValueOp::kZScore: {
      const auto s = z == nullptr ? std::nullopt : z->score(r.items[0]);
      out.reply = s ? ValueReply::of_double(*s) : ValueReply::null();
      return out;
    }
    case ValueOp::kZRank: {
      const auto rank = z == nullptr ? std::nullopt : z->rank(r.items[0]);
      if (!rank) return out;  // nil
      const auto n = static_cast<std::int64_t>(z->size());
      const auto k = static_cast<std::int64_t>(*rank);
      out.reply = ValueReply::of_integer(r.has(kRev) ? n - 1 - k : k);
      return out;
    }
    case ValueOp::kZCount: {
      std::int64_t n = 0;
      if (z != nullptr && !r.range.empty()) n = std::distance(z->lower(r.range), z->upper(r.range));
      out.reply = ValueReply::of_integer(n);
      return out;
    }
    case ValueOp::kZRange:
      return zrange(r, z);
    case ValueOp::kZRemRangeByScore:
      if (z == nullptr || r.range.empty()) {
        out.reply = ValueReply::of_integer(0);
        return out;
      }
      return remove_span(r, cell, *z, z->lower(r.range), z->upper(r.range));
    case ValueOp::kZRemRangeByRank: {
      std::size_t first = 0, last = 0;
      if (z == nullptr || !clamp_range(r.integer, r.integer2, z->size(), first, last)) {
        out.reply = ValueReply::of_integer(0);
        return out;
      }
      const auto begin = z->at_rank(first);
      return remove_span(r, cell, *z, begin,
                         std::next(begin, static_cast<std::ptrdiff_t>(last - first + 1)));
    }
    default:
      break;
  }
  return Error(ErrorCode::kInternal, "not a sorted-set operation");
}

}  // namespace holdfast::value_ops
