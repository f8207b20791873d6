/* Evaluator core: dispatch, names, selection and indexing, literals, logic, operators.
 * See eval.h for the evaluation rules.
 */
#include "cel/eval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "cel/format.h"
#include "cel/operators.h"

namespace holdfast::cel {
namespace {

// Rough bytes a freshly built value occupies, for the byte budget.
constexpr std::uint64_t kBytesPerElement = sizeof(Value);
constexpr std::uint64_t kBytesPerEntry = 2 * sizeof(Value);

}  // namespace

Result<Value> Evaluator::located(const Node& node, Result<Value> result) const {
  if (result.ok()) return result;
  return error_at(node, result.error().message);
}

bool Evaluator::charge_bytes(std::uint64_t bytes) {
  if (bytes > bytes_left_) {
    // A spent budget ends the evaluation: with no steps left every pending operand fails
    // too, so || and && cannot absorb the overrun into a result.
    bytes_left_ = 0;
    steps_left_ = 0;
    return false;
  }
  bytes_left_ -= bytes;
  return true;
}

bool Evaluator::charge_work(std::uint64_t units) {
  const std::uint64_t steps = units / kWorkUnitsPerStep;
  if (steps >= steps_left_ && steps > 0) {
    steps_left_ = 0;
    return false;
  }
  steps_left_ -= steps;
  return true;
}

Error Evaluator::budget_error(const Node& node, std::string_view what) const {
  return error_at(node, "evaluation exceeded its " + std::string(what) + " limit");
}

Result<Value> Evaluator::eval(const Node& node) {
  switch (node.kind) {
    case NodeKind::kLiteral:
    case NodeKind::kIdent:
    case NodeKind::kSelect:
    case NodeKind::kIndex: {
      Value scratch;
      auto ref = eval_ref(node, scratch);
      if (!ref.ok()) return std::move(ref).error();
      if (ref.value() == &scratch) return scratch;
      return *ref.value();
    }
    default:
      break;
  }
  if (!take_step()) return budget_error(node, "step");
  switch (node.kind) {
    case NodeKind::kHas:
      return has(node);
    case NodeKind::kList:
      return list(node);
    case NodeKind::kMap:
      return map(node);
    case NodeKind::kNot:
    case NodeKind::kNegate:
      return unary(node);
    case NodeKind::kAnd:
      return logical(node, true);
    case NodeKind::kOr:
      return logical(node, false);
    case NodeKind::kConditional:
      return conditional(node);
    case NodeKind::kBinary:
      return binary(node);
    case NodeKind::kAdd:
      return add(node);
    case NodeKind::kBuiltin:
      return builtin(node);
    case NodeKind::kHostCall:
      return host_call(node);
    case NodeKind::kUnknownMethod:
      return unknown_method(node);
    case NodeKind::kComprehension:
      return comprehension(node);
    case NodeKind::kLiteral:
    case NodeKind::kIdent:
    case NodeKind::kSelect:
    case NodeKind::kIndex:
      break;  // handled above
  }
  return error_at(node, "internal: unknown node");
}

Result<const Value*> Evaluator::eval_ref(const Node& node, Value& scratch) {
  switch (node.kind) {
    case NodeKind::kLiteral:
      if (!take_step()) return budget_error(node, "step");
      return &node.value;
    case NodeKind::kIdent:
      if (!take_step()) return budget_error(node, "step");
      return identifier(node);
    case NodeKind::kSelect:
      if (!take_step()) return budget_error(node, "step");
      return select(node, scratch);
    case NodeKind::kIndex:
      if (!take_step()) return budget_error(node, "step");
      return index(node, scratch);
    default: {
      auto value = eval(node);
      if (!value.ok()) return std::move(value).error();
      scratch = std::move(value).value();
      return &scratch;
    }
  }
}

Result<const Value*> Evaluator::identifier(const Node& node) {
  if (node.slot >= 0) return locals_[static_cast<std::size_t>(node.slot)];
  if (const Value* value = activation_.find_variable(node.name)) return value;
  return error_at(node, "undeclared reference to '" + node.name + "'");
}

Result<const Value*> Evaluator::select(const Node& node, Value& scratch) {
  auto operand = eval_ref(*node.args[0], scratch);
  if (!operand.ok()) return operand;
  const Value& base = *operand.value();
  if (!base.is(ValueKind::kMap)) {
    return error_at(node, "type '" + kind_of(base) + "' does not support field selection");
  }
  if (const Value* field = base.as_map().find(node.name)) return field;
  return error_at(node, "no such key: '" + node.name + "'");
}

Result<Value> Evaluator::has(const Node& node) {
  Value scratch;
  auto operand = eval_ref(*node.args[0], scratch);
  if (!operand.ok()) return std::move(operand).error();
  const Value& base = *operand.value();
  if (!base.is(ValueKind::kMap)) {
    return error_at(node, "has() needs a map, got '" + kind_of(base) + "'");
  }
  return Value::from_bool(base.as_map().find(node.name) != nullptr);
}

Result<const Value*> Evaluator::index(const Node& node, Value& scratch) {
  auto container_ref = eval_ref(*node.args[0], scratch);
  if (!container_ref.ok()) return container_ref;
  Value key_scratch;
  auto key_ref = eval_ref(*node.args[1], key_scratch);
  if (!key_ref.ok()) return key_ref;
  const Value& container = *container_ref.value();
  const Value& key = *key_ref.value();
  if (container.is(ValueKind::kMap)) {
    switch (key.kind()) {
      case ValueKind::kInt:
      case ValueKind::kUint:
      case ValueKind::kDouble:
      case ValueKind::kBool:
      case ValueKind::kString:
        break;
      default:
        return error_at(node, "unsupported map key type '" + kind_of(key) + "'");
    }
    if (const Value* value = container.as_map().find(key)) return value;
    return error_at(node, "no such key: " + format_value(key));
  }
  if (!container.is(ValueKind::kList)) {
    return error_at(node, "type '" + kind_of(container) + "' does not support indexing");
  }
  const auto items = container.as_list();
  // An index is an int, a uint, or a double holding a whole number (CEL's numeric equality).
  constexpr std::uint64_t kBeyond = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t position = kBeyond;
  switch (key.kind()) {
    case ValueKind::kInt:
      if (key.as_int() >= 0) position = static_cast<std::uint64_t>(key.as_int());
      break;
    case ValueKind::kUint:
      position = key.as_uint();
      break;
    case ValueKind::kDouble: {
      const double d = key.as_double();
      if (std::trunc(d) != d)
        return error_at(node, "list index " + format_value(key) + " is not a whole number");
      if (d >= 0 && d < 18446744073709551616.0) position = static_cast<std::uint64_t>(d);
      break;
    }
    default:
      return error_at(node, "no matching overload for list[" + kind_of(key) + "]");
  }
  if (position >= items.size()) {
    return error_at(node, "index " + format_value(key) + " out of range for a list of size " +
                              std::to_string(items.size()));
  }
  return &items[position];
}

Result<Value> Evaluator::list(const Node& node) {
  if (node.args.empty()) return Value::from_list({});
  if (!charge_bytes(node.args.size() * kBytesPerElement)) return budget_error(node, "memory");
  std::vector<Value> items;
  items.reserve(node.args.size());
  for (const auto& arg : node.args) {
    auto item = eval(*arg);
    if (!item.ok()) return item;
    items.push_back(std::move(item).value());
  }
  return Value::from_list(std::move(items));
}

Result<Value> Evaluator::map(const Node& node) {
  if (!charge_bytes(node.args.size() / 2 * kBytesPerEntry)) return budget_error(node, "memory");
  std::vector<std::pair<Value, Value>> entries;
  entries.reserve(node.args.size() / 2);
  for (std::size_t i = 0; i + 1 < node.args.size(); i += 2) {
    auto key = eval(*node.args[i]);
    if (!key.ok()) return key;
    auto value = eval(*node.args[i + 1]);
    if (!value.ok()) return value;
    entries.emplace_back(std::move(key).value(), std::move(value).value());
  }
  return located(node, Value::from_map(std::move(entries)));
}

Result<Value> Evaluator::logical(const Node& node, bool is_and) {
  // `decisive` is the operand value that settles the result on its own: false for &&, true
  // for ||. Anything else that is not a bool is remembered and reported only if no operand
  // turns out to be decisive.
  const bool decisive = !is_and;
  std::optional<Error> pending;
  for (const auto& arg : node.args) {
    Value scratch;
    auto operand = eval_ref(*arg, scratch);
    if (operand.ok() && operand.value()->is(ValueKind::kBool)) {
      if (operand.value()->as_bool() == decisive) return Value::from_bool(decisive);
      continue;
    }
    if (pending) continue;
    if (operand.ok()) {
      pending = error_at(*arg, std::string("no matching overload: ") + (is_and ? "&&" : "||") +
                                   " needs bool operands, got '" + kind_of(*operand.value()) + "'");
    } else {
      pending = std::move(operand).error();
    }
  }
  if (pending) return std::move(*pending);
  return Value::from_bool(!decisive);
}

Result<Value> Evaluator::conditional(const Node& node) {
  Value scratch;
  auto condition = eval_ref(*node.args[0], scratch);
  if (!condition.ok()) return std::move(condition).error();
  if (!condition.value()->is(ValueKind::kBool)) {
    return error_at(node, "no matching overload: the condition of ?: must be a bool, got '" +
                              kind_of(*condition.value()) + "'");
  }
  return eval(*node.args[condition.value()->as_bool() ? 1 : 2]);
}

Result<Value> Evaluator::unary(const Node& node) {
  Value scratch;
  auto operand = eval_ref(*node.args[0], scratch);
  if (!operand.ok()) return std::move(operand).error();
  return located(node, node.kind == NodeKind::kNot ? not_value(*operand.value())
                                                   : negate_value(*operand.value()));
}

Result<Value> Evaluator::binary(const Node& node) {
  Value lhs_scratch, rhs_scratch;
  auto lhs_ref = eval_ref(*node.args[0], lhs_scratch);
  if (!lhs_ref.ok()) return std::move(lhs_ref).error();
  auto rhs_ref = eval_ref(*node.args[1], rhs_scratch);
  if (!rhs_ref.ok()) return std::move(rhs_ref).error();
  const Value& lhs = *lhs_ref.value();
  const Value& rhs = *rhs_ref.value();
  // Comparisons walk both operands; `in` walks the list (or one key of the map).
  std::uint64_t work = 0;
  switch (node.op) {
    case BinaryOp::kEqual:
    case BinaryOp::kNotEqual:
    case BinaryOp::kLess:
    case BinaryOp::kLessEqual:
    case BinaryOp::kGreater:
    case BinaryOp::kGreaterEqual:
      work = std::min(lhs.weight(), rhs.weight());
      break;
    case BinaryOp::kIn:
      work = rhs.is(ValueKind::kList) ? rhs.weight() : lhs.weight();
      break;
    default:
      break;
  }
  if (!charge_work(work)) return budget_error(node, "step");
  return located(node, apply_binary(node.op, lhs, rhs));
}

Result<Value> Evaluator::add(const Node& node) {
  // Chains are short; keep their operands on the stack.
  constexpr std::size_t kInline = 8;
  std::array<Value, kInline> inline_scratch;
  std::array<const Value*, kInline> inline_refs;
  std::vector<Value> heap_scratch;
  std::vector<const Value*> heap_refs;
  std::span<Value> scratch(inline_scratch.data(), std::min(node.args.size(), kInline));
  std::span<const Value*> refs(inline_refs.data(), scratch.size());
  if (node.args.size() > kInline) {
    heap_scratch.resize(node.args.size());
    heap_refs.resize(node.args.size());
    scratch = heap_scratch;
    refs = heap_refs;
  }
  for (std::size_t i = 0; i < node.args.size(); ++i) {
    auto operand = eval_ref(*node.args[i], scratch[i]);
    if (!operand.ok()) return std::move(operand).error();
    refs[i] = operand.value();
  }
  return add_evaluated(node, refs);
}

Result<Value> Evaluator::add_evaluated(const Node& node, std::span<const Value* const> operands) {
  // All strings (or all bytes): size the result once instead of once per '+'.
  const ValueKind kind = operands[0]->kind();
  if (kind == ValueKind::kString || kind == ValueKind::kBytes) {
    bool uniform = true;
    std::size_t total = 0;
    for (const Value* v : operands) {
      if (v->kind() != kind) {
        uniform = false;
        break;
      }
      total += kind == ValueKind::kString ? v->as_string().size() : v->as_bytes().size();
    }
    if (uniform) {
      if (!charge_bytes(total)) return budget_error(node, "memory");
      std::string joined;
      joined.reserve(total);
      for (const Value* v : operands)
        joined.append(kind == ValueKind::kString ? v->as_string() : v->as_bytes());
      return kind == ValueKind::kString ? Value::from_string(std::move(joined))
                                        : Value::from_bytes(std::move(joined));
    }
  }
  Value sum = *operands[0];
  for (std::size_t i = 1; i < operands.size(); ++i) {
    auto next = add_values(sum, *operands[i]);
    if (!next.ok()) return error_at(node, next.error().message);
    sum = std::move(next).value();
    if (sum.is(ValueKind::kList) && !charge_bytes(sum.as_list().size() * kBytesPerElement)) {
      return budget_error(node, "memory");
    }
  }
  return sum;
}

}  // namespace holdfast::cel
