/* CEL operators; see operators.h for the overloads and their error cases. */
#include "cel/operators.h"

#include <cmath>
#include <limits>
#include <string>

namespace holdfast::cel {
namespace {

constexpr std::int64_t kIntMin = std::numeric_limits<std::int64_t>::min();

Error no_overload(std::string_view op, const Value& a, const Value& b) {
  return invalid_argument("no matching overload for " + std::string(kind_name(a.kind())) + " " +
                          std::string(op) + " " + std::string(kind_name(b.kind())));
}

Error overflow(ValueKind kind) {
  return invalid_argument(kind == ValueKind::kInt ? "int overflow" : "uint overflow");
}

Result<Value> int_arith(BinaryOp op, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  switch (op) {
    case BinaryOp::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return overflow(ValueKind::kInt);
      return Value::from_int(r);
    case BinaryOp::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return overflow(ValueKind::kInt);
      return Value::from_int(r);
    case BinaryOp::kDiv:
      if (y == 0) return invalid_argument("division by zero");
      if (x == kIntMin && y == -1) return overflow(ValueKind::kInt);
      return Value::from_int(x / y);
    case BinaryOp::kMod:
      if (y == 0) return invalid_argument("modulus by zero");
      if (x == kIntMin && y == -1) return overflow(ValueKind::kInt);  // x % y is UB in C++
      return Value::from_int(x % y);
    default:
      return invalid_argument("internal: not an arithmetic operator");
  }
}

Result<Value> uint_arith(BinaryOp op, std::uint64_t x, std::uint64_t y) {
  std::uint64_t r = 0;
  switch (op) {
    case BinaryOp::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return overflow(ValueKind::kUint);
      return Value::from_uint(r);
    case BinaryOp::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return overflow(ValueKind::kUint);
      return Value::from_uint(r);
    case BinaryOp::kDiv:
      if (y == 0) return invalid_argument("division by zero");
      return Value::from_uint(x / y);
    case BinaryOp::kMod:
      if (y == 0) return invalid_argument("modulus by zero");
      return Value::from_uint(x % y);
    default:
      return invalid_argument("internal: not an arithmetic operator");
  }
}

Result<Value> arithmetic(BinaryOp op, const Value& a, const Value& b) {
  if (a.kind() == b.kind()) {
    switch (a.kind()) {
      case ValueKind::kInt:
        return int_arith(op, a.as_int(), b.as_int());
      case ValueKind::kUint:
        return uint_arith(op, a.as_uint(), b.as_uint());
      case ValueKind::kDouble: {
        const double x = a.as_double(), y = b.as_double();
        if (op == BinaryOp::kSub) return Value::from_double(x - y);
        if (op == BinaryOp::kMul) return Value::from_double(x * y);
        if (op == BinaryOp::kDiv) return Value::from_double(x / y);
        break;  // no % on doubles
      }
      default:
        break;
    }
  }
  return no_overload(binary_op_name(op), a, b);
}

Result<Value> ordering(BinaryOp op, const Value& a, const Value& b) {
  const auto order = compare_values(a, b);
  if (!order) return no_overload(binary_op_name(op), a, b);
  switch (op) {
    case BinaryOp::kLess:
      return Value::from_bool(*order < 0);
    case BinaryOp::kLessEqual:
      return Value::from_bool(*order <= 0);
    case BinaryOp::kGreater:
      return Value::from_bool(*order > 0);
    case BinaryOp::kGreaterEqual:
      return Value::from_bool(*order >= 0);
    default:
      return invalid_argument("internal: not an ordering operator");
  }
}

Result<Value> membership(const Value& element, const Value& container) {
  if (container.is(ValueKind::kList)) {
    for (const Value& item : container.as_list()) {
      if (values_equal(element, item)) return Value::from_bool(true);
    }
    return Value::from_bool(false);
  }
  if (container.is(ValueKind::kMap))
    return Value::from_bool(container.as_map().find(element) != nullptr);
  return no_overload("in", element, container);
}

template <typename Concat>
Value concat_strings(std::string_view x, std::string_view y, Concat make) {
  std::string joined;
  joined.reserve(x.size() + y.size());
  joined.append(x).append(y);
  return make(std::move(joined));
}

}  // namespace

std::string_view binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kEqual:
      return "==";
    case BinaryOp::kNotEqual:
      return "!=";
    case BinaryOp::kLess:
      return "<";
    case BinaryOp::kLessEqual:
      return "<=";
    case BinaryOp::kGreater:
      return ">";
    case BinaryOp::kGreaterEqual:
      return ">=";
    case BinaryOp::kIn:
      return "in";
  }
  return "?";
}

Result<Value> add_values(const Value& a, const Value& b) {
  if (a.kind() == b.kind()) {
    switch (a.kind()) {
      case ValueKind::kInt: {
        std::int64_t r = 0;
        if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) return overflow(ValueKind::kInt);
        return Value::from_int(r);
      }
      case ValueKind::kUint: {
        std::uint64_t r = 0;
        if (__builtin_add_overflow(a.as_uint(), b.as_uint(), &r)) return overflow(ValueKind::kUint);
        return Value::from_uint(r);
      }
      case ValueKind::kDouble:
        return Value::from_double(a.as_double() + b.as_double());
      case ValueKind::kString:
        return concat_strings(a.as_string(), b.as_string(), Value::from_string);
      case ValueKind::kBytes:
        return concat_strings(a.as_bytes(), b.as_bytes(), Value::from_bytes);
      case ValueKind::kList: {
        const auto x = a.as_list(), y = b.as_list();
        if (x.empty()) return b;
        if (y.empty()) return a;
        std::vector<Value> joined;
        joined.reserve(x.size() + y.size());
        joined.insert(joined.end(), x.begin(), x.end());
        joined.insert(joined.end(), y.begin(), y.end());
        return Value::from_list(std::move(joined));
      }
      default:
        break;
    }
  }
  return no_overload("+", a, b);
}

Result<Value> apply_binary(BinaryOp op, const Value& a, const Value& b) {
  switch (op) {
    case BinaryOp::kSub:
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      return arithmetic(op, a, b);
    case BinaryOp::kEqual:
      return Value::from_bool(values_equal(a, b));
    case BinaryOp::kNotEqual:
      return Value::from_bool(!values_equal(a, b));
    case BinaryOp::kLess:
    case BinaryOp::kLessEqual:
    case BinaryOp::kGreater:
    case BinaryOp::kGreaterEqual:
      return ordering(op, a, b);
    case BinaryOp::kIn:
      return membership(a, b);
  }
  return invalid_argument("internal: unknown operator");
}

Result<Value> negate_value(const Value& a) {
  if (a.is(ValueKind::kInt)) {
    if (a.as_int() == kIntMin) return overflow(ValueKind::kInt);
    return Value::from_int(-a.as_int());
  }
  if (a.is(ValueKind::kDouble)) return Value::from_double(-a.as_double());
  return invalid_argument("no matching overload for -" + std::string(kind_name(a.kind())));
}

Result<Value> not_value(const Value& a) {
  if (a.is(ValueKind::kBool)) return Value::from_bool(!a.as_bool());
  return invalid_argument("no matching overload for !" + std::string(kind_name(a.kind())));
}

}  // namespace holdfast::cel
