// Hashes: HSET, HGET, HMGET, HDEL, HEXISTS, HINCRBY, HGETALL, HLEN, as Redis 7.0's t_hash.c
// answers them.
#include <absl/container/flat_hash_set.h>

#include "core/values/value_ops_internal.h"

namespace holdfast::value_ops {
namespace {

Result<ValueOutcome> hset(const ValueRequest& r, ValueCell& cell, Hash* h) {
  const std::size_t size = h == nullptr ? 0 : h->size();
  const std::size_t pairs = r.items.size() / 2;
  if (size + pairs > kMaxValueElements) {
    absl::flat_hash_set<std::string_view> seen;
    std::size_t added = 0;
    for (std::size_t i = 0; i < r.items.size(); i += 2) {
      if ((h == nullptr || !h->get(r.items[i])) && seen.insert(r.items[i]).second) ++added;
    }
    if (size + added > kMaxValueElements) return too_many_elements(size + added);
  }
  const bool fresh = h == nullptr;
  if (fresh) h = &create<Hash>(cell);
  ValueOutcome out;
  ValueEdit e = make_edit(r, ValueEdit::Op::kHashPut, fresh);
  std::int64_t added = 0;
  for (std::size_t i = 0; i + 1 < r.items.size(); i += 2) {
    if (h->put(r.items[i], r.items[i + 1])) ++added;
    e.items.emplace_back(r.items[i]);
    e.items.emplace_back(r.items[i + 1]);
  }
  out.reply = ValueReply::of_integer(added);
  out.edits.push_back(std::move(e));
  return out;
}

Result<ValueOutcome> hincrby(const ValueRequest& r, ValueCell& cell, Hash* h) {
  const std::string_view field = r.items[0];
  std::int64_t before = 0;
  const auto current = h == nullptr ? std::nullopt : h->get(field);
  if (current) {
    const auto n = parse_redis_integer(*current);
    if (!n) return hash_not_integer();
    before = *n;
  } else if (const std::size_t size = h == nullptr ? 0 : h->size(); size + 1 > kMaxValueElements) {
    return too_many_elements(size + 1);
  }
  const auto after = add_checked(before, r.integer);
  if (!after) return would_overflow();
  const bool fresh = h == nullptr;
  if (fresh) h = &create<Hash>(cell);
  const std::string text = std::to_string(*after);
  h->put(field, text);
  ValueOutcome out;
  out.reply = ValueReply::of_integer(*after);
  ValueEdit e = make_edit(r, ValueEdit::Op::kHashPut, fresh);
  e.items.emplace_back(field);
  e.items.push_back(text);
  out.edits.push_back(std::move(e));
  return out;
}

}  // namespace

Result<ValueOutcome> run_hash_op(const ValueRequest& r, ValueCell& cell) {
  auto found = typed<Hash>(cell);
  if (!found.ok()) return std::move(found).error();
  Hash* h = *found;
  ValueOutcome out;
  switch (r.op) {
    case ValueOp::kHSet:
      return hset(r, cell, h);
    case ValueOp::kHIncrBy:
      return hincrby(r, cell, h);
    case ValueOp::kHGet: {
      const auto v = h == nullptr ? std::nullopt : h->get(r.items[0]);
      if (v) out.reply = ValueReply::bulk(*v);
      return out;
    }
    case ValueOp::kHMGet:
      out.reply = ValueReply::of(ValueReply::Kind::kArray);
      for (std::string_view f : r.items) {
        const auto v = h == nullptr ? std::nullopt : h->get(f);
        out.reply.items.push_back(v ? ValueReply::bulk(*v) : ValueReply::null());
      }
      return out;
    case ValueOp::kHDel: {
      std::int64_t removed = 0;
      ValueEdit e = make_edit(r, ValueEdit::Op::kHashRemove, false);
      for (std::string_view f : r.items) {
        if (h != nullptr && h->remove(f)) {
          ++removed;
          e.items.emplace_back(f);
        }
      }
      out.reply = ValueReply::of_integer(removed);
      if (removed > 0) out.edits.push_back(std::move(e));
      drop_if_empty(cell);
      return out;
    }
    case ValueOp::kHExists:
      out.reply = ValueReply::of_integer(h != nullptr && h->get(r.items[0]) ? 1 : 0);
      return out;
    case ValueOp::kHGetAll:
      out.reply = ValueReply::of(ValueReply::Kind::kMap);
      if (h != nullptr) {
        out.reply.items.reserve(h->size() * 2);
        h->for_each([&](std::string_view f, std::string_view v) {
          out.reply.items.push_back(ValueReply::bulk(f));
          out.reply.items.push_back(ValueReply::bulk(v));
        });
      }
      return out;
    case ValueOp::kHLen:
      out.reply = ValueReply::of_integer(h == nullptr ? 0 : static_cast<std::int64_t>(h->size()));
      return out;
    default:
      break;
  }
  return Error(ErrorCode::kInternal, "not a hash operation");
}

}  // namespace holdfast::value_ops
