/* Compile-time resolution of calls: macros, standard functions, host functions.
 *
 * The parser hands every call here. What a call means is fixed at compile time:
 *   1. has(m.f)                          -> kHas (the argument must be a field selection)
 *   2. e.all/exists/exists_one/filter(x, p), e.map(x, t), e.map(x, p, t)
 *                                        -> kComprehension (x must be a simple name)
 *   3. size, int, uint, double, string, bool, bytes, dyn, matches as functions, and
 *      size, startsWith, endsWith, contains, matches as methods  -> kBuiltin
 *   4. any other function                -> kHostCall, looked up in the Activation when
 *      evaluated (so an unknown function is an evaluation error, absorbed by || and &&)
 *   5. any other method                  -> kUnknownMethod (an evaluation error)
 * A macro or standard function called with the wrong number of arguments, or a literal
 * `matches` pattern that RE2 rejects, is a compile error: no evaluation could succeed.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cel/ast.h"
#include "cel/source.h"
#include "core/error.h"

namespace holdfast::cel {

// `receiver` is null for a global call. `offset` is the position of the function name.
Result<NodePtr> build_call(const SourceMap& map, std::uint32_t offset, std::string name,
                           NodePtr receiver, std::vector<NodePtr> args);

// Binds every identifier that names an enclosing macro's iteration variable to that
// variable's slot (its macro nesting level), innermost binding first. Run once on the tree.
void resolve_macro_variables(Node& root);

}  // namespace holdfast::cel
