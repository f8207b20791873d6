// What the operations of value_ops_*.cc share: finding a value of a type, making one, the
// edits they report and the errors they answer.
#pragma once

#include <string>

#include "core/values/limits.h"
#include "core/values/value_ops.h"

namespace holdfast::value_ops {

// The cell's value as a T; nullptr when the key holds no value; WRONGTYPE for another type.
template <typename T>
Result<T*> typed(ValueCell& cell) {
  if (!cell.value) return static_cast<T*>(nullptr);
  if (T* v = std::get_if<T>(&cell.value->data)) return v;
  return wrong_type();
}

// Makes the empty cell hold a new T, with no expiry.
template <typename T>
T& create(ValueCell& cell) {
  cell.value.emplace(Value{T{}});
  cell.expires_at = kNever;
  return std::get<T>(cell.value->data);
}

// The edit `op` of the request's key; `fresh` when the command made the value.
ValueEdit make_edit(const ValueRequest& r, ValueEdit::Op op, bool fresh);

// An aggregate left without elements is gone, expiry and all.
void drop_if_empty(ValueCell& cell);

// ERR when a command would leave `would_have` elements in one key (past kMaxValueElements).
Error too_many_elements(std::size_t would_have);

// Redis's words.
Error not_an_integer();      // ERR value is not an integer or out of range
Error would_overflow();      // ERR increment or decrement would overflow
Error hash_not_integer();    // ERR hash value is not an integer
Error score_not_a_number();  // ERR resulting score is not a number (NaN)

// [start, stop] of a sequence of `size` after Redis's rules for negative and out-of-range
// indexes (ZRANGE, LRANGE, ZREMRANGEBYRANK): false when it is empty.
bool clamp_range(std::int64_t start, std::int64_t stop, std::size_t size, std::size_t& first,
                 std::size_t& last);

Result<ValueOutcome> run_counter_op(const ValueRequest& r, ValueCell& cell);
Result<ValueOutcome> run_zset_op(const ValueRequest& r, ValueCell& cell);
Result<ValueOutcome> run_hash_op(const ValueRequest& r, ValueCell& cell);
Result<ValueOutcome> run_list_op(const ValueRequest& r, ValueCell& cell);

}  // namespace holdfast::value_ops
