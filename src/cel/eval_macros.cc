/* Evaluation of the comprehension macros over a list (its elements) or a map (its keys):
 *
 *   all(x, p)        false if p is false for any element, even if p fails for others;
 *                    otherwise the first error (or non-bool) if any; otherwise true.
 *   exists(x, p)     the mirror image: true if p is true for any element; ...
 *   exists_one(x, p) true if p is true for exactly one element; any error fails the macro
 *                    (it must look at every element anyway, so nothing is absorbed).
 *   map(x, t)        the list of t for each element; any error fails the macro.
 *   filter(x, p)     the elements for which p is true; any error fails the macro.
 *   map(x, p, t)     t for each element for which p is true.
 *
 * all and exists stop at the first decisive element, as && and || would. The iteration
 * variable lives in locals_[slot] for the duration of the loop; nested macros use deeper
 * slots, so an inner `x` shadows an outer one (resolved at compile time, see calls.h).
 */
#include <optional>
#include <vector>

#include "cel/eval.h"

namespace holdfast::cel {
namespace {

std::string_view macro_name(Macro macro) {
  switch (macro) {
    case Macro::kAll:
      return "all";
    case Macro::kExists:
      return "exists";
    case Macro::kExistsOne:
      return "exists_one";
    case Macro::kMap:
    case Macro::kFilterMap:
      return "map";
    case Macro::kFilter:
      return "filter";
  }
  return "macro";
}

}  // namespace

Result<Value> Evaluator::comprehension(const Node& node) {
  Value range_scratch;
  auto range_ref = eval_ref(*node.args[0], range_scratch);
  if (!range_ref.ok()) return std::move(range_ref).error();
  const Value* range = range_ref.value();
  const bool is_list = range->is(ValueKind::kList);
  if (!is_list && !range->is(ValueKind::kMap)) {
    return error_at(node, std::string(macro_name(node.macro)) + "() needs a list or a map, got '" +
                              std::string(kind_name(range->kind())) + "'");
  }
  const std::span<const Value> elements = is_list ? range->as_list() : std::span<const Value>();
  const auto entries = is_list ? std::span<const MapValue::Entry>() : range->as_map().entries();
  const std::size_t count = is_list ? elements.size() : entries.size();
  const auto slot = static_cast<std::size_t>(node.slot);
  const Macro macro = node.macro;
  const bool builds_list =
      macro == Macro::kMap || macro == Macro::kFilter || macro == Macro::kFilterMap;
  if (builds_list && !charge_bytes(count * sizeof(Value))) return budget_error(node, "memory");

  // Evaluates a predicate operand that must produce a bool.
  auto predicate = [&](const Node& operand) -> Result<Value> {
    auto result = eval(operand);
    if (result.ok() && !result->is(ValueKind::kBool)) {
      return error_at(operand, std::string(macro_name(macro)) + "(): the predicate returned '" +
                                   std::string(kind_name(result->kind())) + "', not a bool");
    }
    return result;
  };

  std::optional<Error> pending;  // all/exists: the first error, reported if nothing decides
  std::size_t matches = 0;       // exists_one
  std::vector<Value> built;      // map/filter
  if (builds_list) built.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (!take_step()) return budget_error(node, "step");
    const Value& element = is_list ? elements[i] : entries[i].first;
    locals_[slot] = &element;
    switch (macro) {
      case Macro::kAll:
      case Macro::kExists: {
        const bool decisive = macro == Macro::kExists;
        auto result = predicate(*node.args[1]);
        if (!result.ok()) {
          if (!pending) pending = std::move(result).error();
        } else if (result->as_bool() == decisive) {
          return Value::from_bool(decisive);
        }
        break;
      }
      case Macro::kExistsOne: {
        auto result = predicate(*node.args[1]);
        if (!result.ok()) return result;
        if (result->as_bool()) ++matches;
        break;
      }
      case Macro::kMap: {
        auto result = eval(*node.args[1]);
        if (!result.ok()) return result;
        built.push_back(std::move(result).value());
        break;
      }
      case Macro::kFilter:
      case Macro::kFilterMap: {
        auto keep = predicate(*node.args[1]);
        if (!keep.ok()) return keep;
        if (!keep->as_bool()) break;
        if (macro == Macro::kFilter) {
          built.push_back(element);
          break;
        }
        auto result = eval(*node.args[2]);
        if (!result.ok()) return result;
        built.push_back(std::move(result).value());
        break;
      }
    }
  }
  switch (macro) {
    case Macro::kAll:
    case Macro::kExists:
      if (pending) return std::move(*pending);
      return Value::from_bool(macro == Macro::kAll);
    case Macro::kExistsOne:
      return Value::from_bool(matches == 1);
    case Macro::kMap:
    case Macro::kFilter:
    case Macro::kFilterMap:
      return Value::from_list(std::move(built));
  }
  return error_at(node, "internal: unknown macro");
}

}  // namespace holdfast::cel
