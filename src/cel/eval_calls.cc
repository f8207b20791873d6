/* Evaluation of calls: the standard functions (size, the string predicates, conversions),
 * host functions from the Activation, and unknown methods. See eval.h.
 *
 * The string predicates avoid allocation for the common rule shape
 * `record.key.startsWith('user:' + user.userId + ':')`: when the argument is a concatenation of
 * strings that fits in a small stack buffer, it is assembled there and never becomes a Value.
 */
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "cel/conversions.h"
#include "cel/eval.h"
#include "cel/regex.h"
#include "cel/utf8.h"

namespace holdfast::cel {
namespace {

constexpr std::size_t kScratchBytes = 256;

// Fixed-capacity storage for evaluated call operands, spilling to the heap past kInline.
class Operands {
 public:
  static constexpr std::size_t kInline = 4;
  explicit Operands(std::size_t count) : count_(count) {
    if (count > kInline) heap_.resize(count);
  }
  std::span<Value> values() {
    return count_ > kInline ? std::span<Value>(heap_) : std::span<Value>(inline_.data(), count_);
  }

 private:
  std::size_t count_;
  std::array<Value, kInline> inline_;
  std::vector<Value> heap_;
};

}  // namespace

struct Evaluator::StringOperand {
  ValueKind kind = ValueKind::kNull;
  std::string_view text;  // valid when kind == kString
  Value holder;           // keeps `text` alive when it is not in `scratch`
  std::array<char, kScratchBytes> scratch;
};

Result<Ok> Evaluator::string_argument(const Node& node, StringOperand& out) {
  if (node.kind == NodeKind::kAdd && node.args.size() <= Operands::kInline) {
    if (!take_step()) return budget_error(node, "step");
    Operands operands(node.args.size());
    auto scratch = operands.values();
    std::array<const Value*, Operands::kInline> refs{};
    std::size_t total = 0;
    bool all_strings = true;
    for (std::size_t i = 0; i < scratch.size(); ++i) {
      auto operand = eval_ref(*node.args[i], scratch[i]);
      if (!operand.ok()) return std::move(operand).error();
      refs[i] = operand.value();
      all_strings = all_strings && refs[i]->is(ValueKind::kString);
      if (all_strings) total += refs[i]->as_string().size();
    }
    const std::span<const Value* const> operand_refs(refs.data(), scratch.size());
    if (all_strings && total <= out.scratch.size()) {
      char* cursor = out.scratch.data();
      for (const Value* v : operand_refs)
        cursor = std::copy(v->as_string().begin(), v->as_string().end(), cursor);
      out.kind = ValueKind::kString;
      out.text = std::string_view(out.scratch.data(), total);
      return Ok{};
    }
    auto sum = add_evaluated(node, operand_refs);
    if (!sum.ok()) return std::move(sum).error();
    out.holder = std::move(sum).value();
    out.kind = out.holder.kind();
    if (out.kind == ValueKind::kString) out.text = out.holder.as_string();
    return Ok{};
  }
  auto value = eval_ref(node, out.holder);
  if (!value.ok()) return std::move(value).error();
  out.kind = value.value()->kind();
  if (out.kind == ValueKind::kString) out.text = value.value()->as_string();
  return Ok{};
}

Result<bool> Evaluator::matches(const Node& node, std::string_view text, std::string_view pattern) {
  if (node.regex) return regex_search(*node.regex, text);
  auto regex = node.regex_cache->get(pattern);
  if (!regex.ok()) return error_at(node, regex.error().message);
  return regex_search(*regex.value(), text);
}

Result<Value> Evaluator::string_predicate(const Node& node) {
  Value receiver_scratch;
  auto receiver = eval_ref(*node.args[0], receiver_scratch);
  if (!receiver.ok()) return std::move(receiver).error();
  StringOperand argument;
  if (auto status = string_argument(*node.args[1], argument); !status.ok())
    return std::move(status).error();
  if (!receiver.value()->is(ValueKind::kString) || argument.kind != ValueKind::kString) {
    return error_at(node, "no matching overload for " + kind_of(*receiver.value()) + "." +
                              node.name + "(" + std::string(kind_name(argument.kind)) + ")");
  }
  const std::string_view text = receiver.value()->as_string();
  const std::string_view arg = argument.text;
  // Cost model of the language definition: contains() may compare every position of the
  // text with the whole argument; the others are linear (RE2 guarantees it for matches).
  std::uint64_t work = arg.size();
  if (node.builtin == Builtin::kContains) {
    work = arg.empty() || text.size() <= std::numeric_limits<std::uint64_t>::max() / arg.size()
               ? text.size() * arg.size()
               : std::numeric_limits<std::uint64_t>::max();
  } else if (node.builtin == Builtin::kMatches) {
    work = text.size() + arg.size();
  }
  if (!charge_work(work)) return budget_error(node, "step");
  switch (node.builtin) {
    case Builtin::kStartsWith:
      return Value::from_bool(text.substr(0, arg.size()) == arg);
    case Builtin::kEndsWith:
      return Value::from_bool(text.size() >= arg.size() &&
                              text.substr(text.size() - arg.size()) == arg);
    case Builtin::kContains:
      return Value::from_bool(text.find(arg) != std::string_view::npos);
    case Builtin::kMatches: {
      auto found = matches(node, text, arg);
      if (!found.ok()) return std::move(found).error();
      return Value::from_bool(found.value());
    }
    default:
      return error_at(node, "internal: not a string predicate");
  }
}

Result<Value> Evaluator::builtin(const Node& node) {
  switch (node.builtin) {
    case Builtin::kStartsWith:
    case Builtin::kEndsWith:
    case Builtin::kContains:
    case Builtin::kMatches:
      return string_predicate(node);
    default:
      break;
  }
  Value scratch;
  auto operand_ref = eval_ref(*node.args[0], scratch);
  if (!operand_ref.ok()) return std::move(operand_ref).error();
  const Value& operand = *operand_ref.value();
  // size() counts code points; conversions parse, validate or copy their argument.
  if (!charge_work(operand.weight())) return budget_error(node, "step");
  if (node.builtin != Builtin::kSize) return located(node, convert(node.builtin, operand));
  switch (operand.kind()) {
    case ValueKind::kString:
      return Value::from_int(static_cast<std::int64_t>(count_code_points(operand.as_string())));
    case ValueKind::kBytes:
      return Value::from_int(static_cast<std::int64_t>(operand.as_bytes().size()));
    case ValueKind::kList:
      return Value::from_int(static_cast<std::int64_t>(operand.as_list().size()));
    case ValueKind::kMap:
      return Value::from_int(static_cast<std::int64_t>(operand.as_map().size()));
    default:
      return error_at(node, "no matching overload for size(" + kind_of(operand) + ")");
  }
}

Result<Value> Evaluator::host_call(const Node& node) {
  const Function* function = activation_.find_function(node.name);
  if (function == nullptr) return error_at(node, "unknown function '" + node.name + "'");
  Operands operands(node.args.size());
  auto values = operands.values();
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto arg = eval(*node.args[i]);
    if (!arg.ok()) return arg;
    values[i] = std::move(arg).value();
  }
  auto result = (*function)(std::span<const Value>(values.data(), values.size()));
  if (!result.ok()) return error_at(node, node.name + "(): " + result.error().message);
  return result;
}

Result<Value> Evaluator::unknown_method(const Node& node) {
  // Operands first: CEL calls are strict, so an operand's error wins over the missing method.
  ValueKind receiver_kind = ValueKind::kNull;
  for (std::size_t i = 0; i < node.args.size(); ++i) {
    auto value = eval(*node.args[i]);
    if (!value.ok()) return value;
    if (i == 0) receiver_kind = value->kind();
  }
  return error_at(node,
                  "no such method '" + node.name + "' on " + std::string(kind_name(receiver_kind)));
}

}  // namespace holdfast::cel
