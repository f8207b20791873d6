/* Out-of-line pieces of the syntax tree (see ast.h). */
#include "cel/ast.h"

#include "cel/regex.h"

namespace holdfast::cel {

// Defined here, where RegexCache is complete. Recursion depth is bounded by the parser's
// nesting limit, so destroying a tree cannot exhaust the stack.
Node::~Node() = default;

Node::Node(NodeKind k, std::uint32_t at) : kind(k), offset(at) {}

}  // namespace holdfast::cel
