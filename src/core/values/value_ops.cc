// The dispatch, the helpers the typed operations share, and the counter (INCR and its kin).
#include "core/values/value_ops.h"

#include "core/values/value_ops_internal.h"

namespace holdfast {

Error wrong_type() {
  return Error(ErrorCode::kWrongType, "Operation against a key holding the wrong kind of value");
}

Result<ValueOutcome> run_value_op(const ValueRequest& r, ValueCell& cell) {
  switch (r.op) {
    case ValueOp::kIncrBy:
      return value_ops::run_counter_op(r, cell);
    case ValueOp::kZAdd:
    case ValueOp::kZIncrBy:
    case ValueOp::kZRem:
    case ValueOp::kZCard:
    case ValueOp::kZScore:
    case ValueOp::kZRank:
    case ValueOp::kZCount:
    case ValueOp::kZRange:
    case ValueOp::kZRemRangeByScore:
    case ValueOp::kZRemRangeByRank:
      return value_ops::run_zset_op(r, cell);
    case ValueOp::kHSet:
    case ValueOp::kHGet:
    case ValueOp::kHMGet:
    case ValueOp::kHDel:
    case ValueOp::kHExists:
    case ValueOp::kHIncrBy:
    case ValueOp::kHGetAll:
    case ValueOp::kHLen:
      return value_ops::run_hash_op(r, cell);
    case ValueOp::kPush:
    case ValueOp::kPop:
    case ValueOp::kLRange:
    case ValueOp::kLLen:
    case ValueOp::kLRem:
    case ValueOp::kLIndex:
      return value_ops::run_list_op(r, cell);
    case ValueOp::kType:
    case ValueOp::kPTtl:
    case ValueOp::kGetDel:
      break;
  }
  return Error(ErrorCode::kInternal, "not an operation on a typed value");
}

namespace value_ops {

ValueEdit make_edit(const ValueRequest& r, ValueEdit::Op op, bool fresh) {
  ValueEdit e;
  e.key = r.key;
  e.op = op;
  e.fresh = fresh;
  return e;
}

void drop_if_empty(ValueCell& cell) {
  if (cell.value && cell.value->type() != ValueType::kCounter && cell.value->size() == 0) {
    cell.value.reset();
    cell.expires_at = kNever;
  }
}

Error too_many_elements(std::size_t would_have) {
  return invalid_argument("a sorted set, hash or list holds at most " +
                          std::to_string(kMaxValueElements) + " elements; this would make " +
                          std::to_string(would_have));
}

Error not_an_integer() { return invalid_argument("value is not an integer or out of range"); }
Error would_overflow() { return invalid_argument("increment or decrement would overflow"); }
Error hash_not_integer() { return invalid_argument("hash value is not an integer"); }
Error score_not_a_number() { return invalid_argument("resulting score is not a number (NaN)"); }

bool clamp_range(std::int64_t start, std::int64_t stop, std::size_t size, std::size_t& first,
                 std::size_t& last) {
  const auto n = static_cast<std::int64_t>(size);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  first = static_cast<std::size_t>(start);
  last = static_cast<std::size_t>(stop);
  return true;
}

Result<ValueOutcome> run_counter_op(const ValueRequest& r, ValueCell& cell) {
  auto found = typed<std::int64_t>(cell);
  if (!found.ok()) return std::move(found).error();
  const std::int64_t before = *found != nullptr ? **found : 0;
  const auto after = add_checked(before, r.integer);
  if (!after) return would_overflow();
  const bool fresh = *found == nullptr;
  if (fresh) {
    create<std::int64_t>(cell) = *after;
  } else {
    **found = *after;
  }
  ValueOutcome out;
  out.reply = ValueReply::of_integer(*after);
  ValueEdit e = make_edit(r, ValueEdit::Op::kCounterSet, fresh);
  e.number = *after;
  out.edits.push_back(std::move(e));
  return out;
}

}  // namespace value_ops
}  // namespace holdfast
