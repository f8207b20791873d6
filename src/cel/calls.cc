/* Call resolution and macro variable binding; see calls.h for the rules. */
#include "cel/calls.h"

#include <array>
#include <string_view>

#include "cel/regex.h"

namespace holdfast::cel {
namespace {

struct BuiltinSpec {
  std::string_view name;
  Builtin builtin;
  int arity;  // counting the receiver of a method call
};

constexpr std::array kGlobalBuiltins = {
    BuiltinSpec{"size", Builtin::kSize, 1},       BuiltinSpec{"int", Builtin::kInt, 1},
    BuiltinSpec{"uint", Builtin::kUint, 1},       BuiltinSpec{"double", Builtin::kDouble, 1},
    BuiltinSpec{"string", Builtin::kString, 1},   BuiltinSpec{"bool", Builtin::kBool, 1},
    BuiltinSpec{"bytes", Builtin::kBytes, 1},     BuiltinSpec{"dyn", Builtin::kDyn, 1},
    BuiltinSpec{"matches", Builtin::kMatches, 2},
};

constexpr std::array kMethodBuiltins = {
    BuiltinSpec{"size", Builtin::kSize, 1},
    BuiltinSpec{"startsWith", Builtin::kStartsWith, 2},
    BuiltinSpec{"endsWith", Builtin::kEndsWith, 2},
    BuiltinSpec{"contains", Builtin::kContains, 2},
    BuiltinSpec{"matches", Builtin::kMatches, 2},
};

struct MacroSpec {
  std::string_view name;
  Macro macro;
};

constexpr std::array kMacros = {
    MacroSpec{"all", Macro::kAll},
    MacroSpec{"exists", Macro::kExists},
    MacroSpec{"exists_one", Macro::kExistsOne},
    MacroSpec{"filter", Macro::kFilter},
    MacroSpec{"map", Macro::kMap},
};

std::string plural_arguments(int n) {
  return std::to_string(n) + (n == 1 ? " argument" : " arguments");
}

std::uint32_t subtree_depth(const std::vector<NodePtr>& args) {
  std::uint32_t depth = 0;
  for (const auto& arg : args) depth = std::max(depth, arg->depth);
  return depth + 1;
}

Result<NodePtr> build_has(const SourceMap& map, std::uint32_t offset, std::vector<NodePtr> args) {
  if (args.size() != 1 || args[0]->kind != NodeKind::kSelect) {
    return map.error_at(offset, "has() takes one field selection, e.g. has(m.f)");
  }
  NodePtr node = std::move(args[0]);
  node->kind = NodeKind::kHas;
  return node;
}

Result<NodePtr> build_macro(const SourceMap& map, std::uint32_t offset, const MacroSpec& spec,
                            NodePtr range, std::vector<NodePtr> args) {
  const bool map_form = spec.macro == Macro::kMap;
  if (args.size() != 2 && !(map_form && args.size() == 3)) {
    return map.error_at(offset, std::string(spec.name) + "() takes " + (map_form ? "2 or 3" : "2") +
                                    " arguments: a variable name and an expression");
  }
  if (args[0]->kind != NodeKind::kIdent) {
    return map.error_at(args[0]->offset,
                        std::string(spec.name) + "(): the first argument must be a simple name");
  }
  auto node = std::make_unique<Node>(NodeKind::kComprehension, offset);
  node->macro = map_form && args.size() == 3 ? Macro::kFilterMap : spec.macro;
  node->name = std::move(args[0]->name);
  node->args.push_back(std::move(range));
  for (std::size_t i = 1; i < args.size(); ++i) node->args.push_back(std::move(args[i]));
  node->depth = subtree_depth(node->args);
  return node;
}

Result<NodePtr> build_builtin(const SourceMap& map, std::uint32_t offset, const BuiltinSpec& spec,
                              bool method, std::vector<NodePtr> operands) {
  if (static_cast<int>(operands.size()) != spec.arity) {
    const int shown = method ? spec.arity - 1 : spec.arity;
    return map.error_at(offset, std::string(spec.name) + "() takes " + plural_arguments(shown));
  }
  auto node = std::make_unique<Node>(NodeKind::kBuiltin, offset);
  node->builtin = spec.builtin;
  node->name = std::string(spec.name);
  node->args = std::move(operands);
  node->depth = subtree_depth(node->args);
  if (spec.builtin == Builtin::kMatches) {
    const Node& pattern = *node->args[1];
    if (pattern.kind == NodeKind::kLiteral && pattern.value.is(ValueKind::kString)) {
      auto regex = compile_regex(pattern.value.as_string());
      if (!regex.ok()) return map.error_at(pattern.offset, regex.error().message);
      node->regex = std::move(regex).value();
    } else {
      node->regex_cache = std::make_unique<RegexCache>();
    }
  }
  return node;
}

void resolve(Node& node, std::vector<const std::string*>& scope) {
  if (node.kind == NodeKind::kIdent) {
    for (std::size_t i = scope.size(); i-- > 0;) {
      if (*scope[i] == node.name) {
        node.slot = static_cast<std::int32_t>(i);
        return;
      }
    }
    return;
  }
  if (node.kind != NodeKind::kComprehension) {
    for (auto& arg : node.args) resolve(*arg, scope);
    return;
  }
  // The range is evaluated outside the macro's scope; the other operands inside it.
  resolve(*node.args[0], scope);
  node.slot = static_cast<std::int32_t>(scope.size());
  scope.push_back(&node.name);
  for (std::size_t i = 1; i < node.args.size(); ++i) resolve(*node.args[i], scope);
  scope.pop_back();
}

}  // namespace

Result<NodePtr> build_call(const SourceMap& map, std::uint32_t offset, std::string name,
                           NodePtr receiver, std::vector<NodePtr> args) {
  if (receiver == nullptr) {
    if (name == "has") return build_has(map, offset, std::move(args));
    for (const auto& spec : kGlobalBuiltins) {
      if (spec.name == name) return build_builtin(map, offset, spec, false, std::move(args));
    }
    auto node = std::make_unique<Node>(NodeKind::kHostCall, offset);
    node->name = std::move(name);
    node->args = std::move(args);
    node->depth = subtree_depth(node->args);
    return node;
  }
  for (const auto& spec : kMacros) {
    if (spec.name == name)
      return build_macro(map, offset, spec, std::move(receiver), std::move(args));
  }
  std::vector<NodePtr> operands;
  operands.reserve(args.size() + 1);
  operands.push_back(std::move(receiver));
  for (auto& arg : args) operands.push_back(std::move(arg));
  for (const auto& spec : kMethodBuiltins) {
    if (spec.name == name) return build_builtin(map, offset, spec, true, std::move(operands));
  }
  auto node = std::make_unique<Node>(NodeKind::kUnknownMethod, offset);
  node->name = std::move(name);
  node->args = std::move(operands);
  node->depth = subtree_depth(node->args);
  return node;
}

void resolve_macro_variables(Node& root) {
  std::vector<const std::string*> scope;
  resolve(root, scope);
}

}  // namespace holdfast::cel
