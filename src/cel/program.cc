/* compile() and Program::evaluate(): the public entry points (cel.h).
 *
 * compile: 1. check the size limit and UTF-8 validity of the whole text (so every string
 * literal, and hence every string Value, is valid UTF-8); 2. tokenize; 3. parse, which also
 * resolves calls and macros and enforces the nesting limit. The result shares one immutable
 * CompiledExpression between all copies of the Program.
 */
#include <limits>

#include "cel/ast.h"
#include "cel/cel.h"
#include "cel/eval.h"
#include "cel/lexer.h"
#include "cel/parser.h"
#include "cel/utf8.h"

namespace holdfast::cel {

struct CompiledExpression {
  explicit CompiledExpression(std::string_view source) : map(source) {}
  SourceMap map;
  NodePtr root;
};

Result<Program> compile(std::string_view source) {
  if (source.size() > kMaxSourceBytes) {
    return invalid_argument("expression is " + std::to_string(source.size()) +
                            " bytes long; the limit is " + std::to_string(kMaxSourceBytes));
  }
  auto compiled = std::make_shared<CompiledExpression>(source);
  if (const std::size_t bad = find_invalid_utf8(source); bad != std::string_view::npos) {
    return compiled->map.error_at(static_cast<std::uint32_t>(bad),
                                  "invalid UTF-8 in the expression");
  }
  auto tokens = tokenize(source, compiled->map);
  if (!tokens.ok()) return std::move(tokens).error();
  auto root = parse(tokens.value(), compiled->map);
  if (!root.ok()) return std::move(root).error();
  compiled->root = std::move(root).value();
  return Program(std::move(compiled));
}

Result<Value> Program::evaluate(const Activation& activation, const EvalLimits& limits) const {
  Evaluator evaluator(compiled_->map, activation, limits);
  return evaluator.eval(*compiled_->root);
}

std::string_view Program::source() const { return compiled_->map.text(); }

}  // namespace holdfast::cel
