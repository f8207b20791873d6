// Lists: LPUSH, RPUSH, LPOP, RPOP, LRANGE, LLEN, LREM, LINDEX, as Redis 7.0's t_list.c answers
// them.
#include "core/values/value_ops_internal.h"

namespace holdfast::value_ops {
namespace {

Result<ValueOutcome> push(const ValueRequest& r, ValueCell& cell, List* l) {
  const std::size_t size = l == nullptr ? 0 : l->size();
  if (size + r.items.size() > kMaxValueElements) return too_many_elements(size + r.items.size());
  const bool fresh = l == nullptr;
  if (fresh) l = &create<List>(cell);
  ValueEdit e = make_edit(r, ValueEdit::Op::kListPush, fresh);
  e.right = r.has(kRight);
  for (std::string_view item : r.items) {
    if (e.right) {
      l->push_back(item);
    } else {
      l->push_front(item);
    }
    e.items.emplace_back(item);
  }
  ValueOutcome out;
  out.reply = ValueReply::of_integer(static_cast<std::int64_t>(l->size()));
  out.edits.push_back(std::move(e));
  return out;
}

Result<ValueOutcome> pop(const ValueRequest& r, ValueCell& cell, List* l) {
  ValueOutcome out;
  const bool counted = r.has(kCount);
  if (l == nullptr) {
    out.reply = counted ? ValueReply::null_array() : ValueReply::null();
    return out;
  }
  const std::size_t n =
      counted ? std::min(static_cast<std::size_t>(r.integer), l->size()) : std::size_t{1};
  ValueReply popped = ValueReply::of(ValueReply::Kind::kArray);
  for (std::size_t i = 0; i < n; ++i) {
    if (r.has(kRight)) {
      popped.items.push_back(ValueReply::bulk(l->at(l->size() - 1)));
      l->pop_back();
    } else {
      popped.items.push_back(ValueReply::bulk(l->at(0)));
      l->pop_front();
    }
  }
  if (counted) {
    out.reply = std::move(popped);
  } else {
    out.reply = std::move(popped.items.front());
  }
  if (n > 0) {
    ValueEdit e = make_edit(r, ValueEdit::Op::kListPop, false);
    e.right = r.has(kRight);
    e.number = static_cast<std::int64_t>(n);
    out.edits.push_back(std::move(e));
  }
  drop_if_empty(cell);
  return out;
}

}  // namespace

Result<ValueOutcome> run_list_op(const ValueRequest& r, ValueCell& cell) {
  auto found = typed<List>(cell);
  if (!found.ok()) return std::move(found).error();
  List* l = *found;
  ValueOutcome out;
  switch (r.op) {
    case ValueOp::kPush:
      return push(r, cell, l);
    case ValueOp::kPop:
      return pop(r, cell, l);
    case ValueOp::kLRange: {
      out.reply = ValueReply::of(ValueReply::Kind::kArray);
      std::size_t first = 0, last = 0;
      if (l == nullptr || !clamp_range(r.integer, r.integer2, l->size(), first, last)) return out;
      for (std::size_t i = first; i <= last; ++i)
        out.reply.items.push_back(ValueReply::bulk(l->at(i)));
      return out;
    }
    case ValueOp::kLLen:
      out.reply = ValueReply::of_integer(l == nullptr ? 0 : static_cast<std::int64_t>(l->size()));
      return out;
    case ValueOp::kLRem: {
      const std::size_t removed = l == nullptr ? 0 : l->remove(r.integer, r.items[0]);
      out.reply = ValueReply::of_integer(static_cast<std::int64_t>(removed));
      if (removed > 0) {
        ValueEdit e = make_edit(r, ValueEdit::Op::kListRemove, false);
        e.number = r.integer;
        e.items.emplace_back(r.items[0]);
        out.edits.push_back(std::move(e));
      }
      drop_if_empty(cell);
      return out;
    }
    case ValueOp::kLIndex: {
      if (l == nullptr) return out;
      const auto n = static_cast<std::int64_t>(l->size());
      const std::int64_t i = r.integer < 0 ? r.integer + n : r.integer;
      if (i >= 0 && i < n) out.reply = ValueReply::bulk(l->at(static_cast<std::size_t>(i)));
      return out;
    }
    default:
      break;
  }
  return Error(ErrorCode::kInternal, "not a list operation");
}

}  // namespace holdfast::value_ops
