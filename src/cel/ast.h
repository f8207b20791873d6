/* The syntax tree of a compiled CEL expression.
 *
 * The parser (parser.h) builds it and the call builder (calls.h) resolves what every call
 * means at compile time, so evaluation never looks at names except for variables and host
 * functions: operators become kBinary/kAdd/kNot/..., the standard functions become kBuiltin
 * with a Builtin code, the macros become kComprehension or kHas, and identifiers bound by an
 * enclosing macro carry the slot of that macro's iteration variable.
 *
 * Every node records the byte offset of the token that names it (the operator, the field, the
 * function name, ...) so that evaluation errors point at the right place.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace holdfast::cel {

class RegexCache;

enum class NodeKind : std::uint8_t {
  kLiteral,        // value
  kIdent,          // name; slot >= 0 when it names an enclosing macro's iteration variable
  kSelect,         // args[0].name
  kHas,            // has(args[0].name)
  kIndex,          // args[0][args[1]]
  kList,           // [args...]
  kMap,            // {args[0]: args[1], args[2]: args[3], ...}
  kNot,            // !args[0]
  kNegate,         // -args[0]
  kAnd,            // args[0] && args[1]
  kOr,             // args[0] || args[1]
  kConditional,    // args[0] ? args[1] : args[2]
  kBinary,         // args[0] op args[1]
  kAdd,            // args[0] + args[1] + ... (a left-associative chain, flattened)
  kBuiltin,        // builtin(args...), the receiver of a method call first
  kHostCall,       // name(args...), a function the Activation provides
  kUnknownMethod,  // args[0].name(args[1...]): evaluates its operands, then fails
  kComprehension,  // macro over args[0] with iteration variable `name` in `slot`
};

enum class BinaryOp : std::uint8_t {
  kSub,
  kMul,
  kDiv,
  kMod,
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kIn,
};

enum class Builtin : std::uint8_t {
  kSize,
  kStartsWith,
  kEndsWith,
  kContains,
  kMatches,
  kInt,
  kUint,
  kDouble,
  kString,
  kBool,
  kBytes,
  kDyn,
};

// args[0] is the range. all/exists/exists_one/filter: args[1] is the predicate. map: args[1]
// is the transform. map with a filter (three-argument form): args[1] the predicate, args[2]
// the transform.
enum class Macro : std::uint8_t { kAll, kExists, kExistsOne, kMap, kFilter, kFilterMap };

struct Node {
  // Both out of line, where RegexCache is complete (the header only forward-declares it).
  Node(NodeKind k, std::uint32_t at);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind;
  BinaryOp op = BinaryOp::kSub;
  Builtin builtin = Builtin::kSize;
  Macro macro = Macro::kAll;
  std::uint32_t offset;
  std::uint32_t depth = 1;  // height of this subtree; bounded by kMaxNestingDepth
  std::int32_t slot = -1;
  std::string name;
  Value value;
  std::vector<std::unique_ptr<Node>> args;
  // kBuiltin kMatches: the pattern compiled at compile time when it is a literal, otherwise a
  // cache of the patterns seen at run time (thread-safe; evaluation is const).
  std::shared_ptr<const re2::RE2> regex;
  std::unique_ptr<RegexCache> regex_cache;
};

using NodePtr = std::unique_ptr<Node>;

}  // namespace holdfast::cel
