/* The CEL parser; see parser.h for the grammar and the shape of the tree it builds. */
#include "cel/parser.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string_view>

#include "cel/calls.h"
#include "cel/limits.h"

namespace holdfast::cel {
namespace {

constexpr std::array<std::string_view, 17> kReservedWords = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};

bool is_reserved(std::string_view word) {
  return std::find(kReservedWords.begin(), kReservedWords.end(), word) != kReservedWords.end();
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const SourceMap& map) : tokens_(tokens), map_(map) {}

  Result<NodePtr> parse_all() {
    auto root = expr();
    if (!root.ok()) return root;
    if (peek().kind != TokenKind::kEnd) return unexpected(peek());
    resolve_macro_variables(*root.value());
    return root;
  }

 private:
  // Counts recursion through expr(), the only way the grammar nests (parentheses, list and
  // map elements, call arguments, index expressions, conditional branches).
  class NestingGuard {
   public:
    explicit NestingGuard(int& level) : level_(level) { ++level_; }
    ~NestingGuard() { --level_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    int& level_;
  };

  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    advance();
    return true;
  }

  std::string describe(const Token& t) const {
    if (t.kind == TokenKind::kEnd) return "end of expression";
    std::string_view text = map_.text().substr(t.offset, t.length);
    if (text.size() > 24) {
      std::size_t cut = 24;  // keep the message valid UTF-8: never cut inside a sequence
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
      return "'" + std::string(text.substr(0, cut)) + "...'";
    }
    return "'" + std::string(text) + "'";
  }

  Error unexpected(const Token& t) const {
    if (t.kind == TokenKind::kEnd) return map_.error_at(t.offset, "unexpected end of expression");
    return map_.error_at(t.offset, "unexpected token " + describe(t));
  }

  Result<Ok> expect(TokenKind kind, std::string_view what) {
    if (accept(kind)) return Ok{};
    const Token& t = peek();
    const std::string found = t.kind == TokenKind::kEnd ? "unexpected end of expression"
                                                        : "unexpected token " + describe(t);
    return map_.error_at(t.offset, found + ", expected " + std::string(what));
  }

  Result<NodePtr> finish(NodePtr node) {
    std::uint32_t depth = 0;
    for (const auto& arg : node->args) depth = std::max(depth, arg->depth);
    node->depth = depth + 1;
    if (node->depth > static_cast<std::uint32_t>(kMaxNestingDepth)) return too_deep(node->offset);
    return node;
  }

  Error too_deep(std::uint32_t offset) const {
    return map_.error_at(offset, "expression nests too deeply (the limit is " +
                                     std::to_string(kMaxNestingDepth) + " levels)");
  }

  static NodePtr make(NodeKind kind, std::uint32_t offset) {
    return std::make_unique<Node>(kind, offset);
  }

  Result<NodePtr> expr() {
    NestingGuard guard(nesting_);
    if (nesting_ > kMaxNestingDepth) return too_deep(peek().offset);
    auto condition = logical(TokenKind::kOr);
    if (!condition.ok() || peek().kind != TokenKind::kQuestion) return condition;
    const std::uint32_t at = advance().offset;
    auto then = logical(TokenKind::kOr);
    if (!then.ok()) return then;
    if (auto colon = expect(TokenKind::kColon, "':'"); !colon.ok()) return std::move(colon).error();
    auto otherwise = expr();
    if (!otherwise.ok()) return otherwise;
    NodePtr node = make(NodeKind::kConditional, at);
    node->args.push_back(std::move(condition).value());
    node->args.push_back(std::move(then).value());
    node->args.push_back(std::move(otherwise).value());
    return finish(std::move(node));
  }

  // ConditionalOr (op == kOr) and ConditionalAnd (op == kAnd), flattened into one node.
  Result<NodePtr> logical(TokenKind op) {
    auto first = op == TokenKind::kOr ? logical(TokenKind::kAnd) : relation();
    if (!first.ok() || peek().kind != op) return first;
    NodePtr node = make(op == TokenKind::kOr ? NodeKind::kOr : NodeKind::kAnd, peek().offset);
    node->args.push_back(std::move(first).value());
    while (accept(op)) {
      auto next = op == TokenKind::kOr ? logical(TokenKind::kAnd) : relation();
      if (!next.ok()) return next;
      node->args.push_back(std::move(next).value());
    }
    return finish(std::move(node));
  }

  static bool relation_op(TokenKind kind, BinaryOp& op) {
    switch (kind) {
      case TokenKind::kLess:
        op = BinaryOp::kLess;
        return true;
      case TokenKind::kLessEqual:
        op = BinaryOp::kLessEqual;
        return true;
      case TokenKind::kGreater:
        op = BinaryOp::kGreater;
        return true;
      case TokenKind::kGreaterEqual:
        op = BinaryOp::kGreaterEqual;
        return true;
      case TokenKind::kEqual:
        op = BinaryOp::kEqual;
        return true;
      case TokenKind::kNotEqual:
        op = BinaryOp::kNotEqual;
        return true;
      case TokenKind::kIn:
        op = BinaryOp::kIn;
        return true;
      default:
        return false;
    }
  }

  Result<NodePtr> binary(BinaryOp op, std::uint32_t at, NodePtr lhs, NodePtr rhs) {
    NodePtr node = make(NodeKind::kBinary, at);
    node->op = op;
    node->args.push_back(std::move(lhs));
    node->args.push_back(std::move(rhs));
    return finish(std::move(node));
  }

  Result<NodePtr> relation() {
    auto lhs = addition();
    BinaryOp op{};
    while (lhs.ok() && relation_op(peek().kind, op)) {
      const std::uint32_t at = advance().offset;
      auto rhs = addition();
      if (!rhs.ok()) return rhs;
      lhs = binary(op, at, std::move(lhs).value(), std::move(rhs).value());
    }
    return lhs;
  }

  Result<NodePtr> addition() {
    auto lhs = multiplication();
    while (lhs.ok() && (peek().kind == TokenKind::kPlus || peek().kind == TokenKind::kMinus)) {
      const Token& op = advance();
      auto rhs = multiplication();
      if (!rhs.ok()) return rhs;
      if (op.kind == TokenKind::kMinus) {
        lhs = binary(BinaryOp::kSub, op.offset, std::move(lhs).value(), std::move(rhs).value());
      } else if (lhs.value()->kind == NodeKind::kAdd) {
        lhs.value()->args.push_back(std::move(rhs).value());  // extend the chain a + b + c
        lhs = finish(std::move(lhs).value());
      } else {
        NodePtr node = make(NodeKind::kAdd, op.offset);
        node->args.push_back(std::move(lhs).value());
        node->args.push_back(std::move(rhs).value());
        lhs = finish(std::move(node));
      }
    }
    return lhs;
  }

  Result<NodePtr> multiplication() {
    auto lhs = unary();
    while (lhs.ok()) {
      BinaryOp op{};
      switch (peek().kind) {
        case TokenKind::kStar:
          op = BinaryOp::kMul;
          break;
        case TokenKind::kSlash:
          op = BinaryOp::kDiv;
          break;
        case TokenKind::kPercent:
          op = BinaryOp::kMod;
          break;
        default:
          return lhs;
      }
      const std::uint32_t at = advance().offset;
      auto rhs = unary();
      if (!rhs.ok()) return rhs;
      lhs = binary(op, at, std::move(lhs).value(), std::move(rhs).value());
    }
    return lhs;
  }

  Result<NodePtr> unary() {
    const TokenKind kind = peek().kind;
    if (kind != TokenKind::kBang && kind != TokenKind::kMinus) return member();
    std::vector<std::uint32_t> ops;  // operator offsets, outermost first
    while (peek().kind == kind) ops.push_back(advance().offset);
    Result<NodePtr> operand = NodePtr();
    const TokenKind next = peek(1).kind;
    const bool literal_follows =
        (peek().kind == TokenKind::kInt || peek().kind == TokenKind::kDouble) &&
        next != TokenKind::kDot && next != TokenKind::kLBracket;
    if (kind == TokenKind::kMinus && literal_follows) {
      operand = negative_literal(ops.back());
      ops.pop_back();
    } else {
      operand = member();
    }
    for (std::size_t i = ops.size(); operand.ok() && i-- > 0;) {
      NodePtr node = make(kind == TokenKind::kBang ? NodeKind::kNot : NodeKind::kNegate, ops[i]);
      node->args.push_back(std::move(operand).value());
      operand = finish(std::move(node));
    }
    return operand;
  }

  // '-' followed directly by an int or double literal: one negative literal.
  Result<NodePtr> negative_literal(std::uint32_t minus_offset) {
    const Token& t = advance();
    NodePtr node = make(NodeKind::kLiteral, minus_offset);
    if (t.kind == TokenKind::kDouble) {
      node->value = Value::from_double(-t.real);
      return node;
    }
    constexpr std::uint64_t kMinMagnitude = std::uint64_t{1} << 63;
    if (t.number > kMinMagnitude)
      return map_.error_at(minus_offset, "integer literal out of range");
    node->value =
        Value::from_int(t.number == kMinMagnitude ? std::numeric_limits<std::int64_t>::min()
                                                  : -static_cast<std::int64_t>(t.number));
    return node;
  }

  Result<NodePtr> member() {
    auto node = primary();
    while (node.ok()) {
      const TokenKind kind = peek().kind;
      if (kind == TokenKind::kDot) {
        advance();
        const Token& name = peek();
        if (name.kind != TokenKind::kIdent) {
          return map_.error_at(name.offset, (name.kind == TokenKind::kEnd
                                                 ? std::string("unexpected end of expression")
                                                 : "unexpected token " + describe(name)) +
                                                ", expected a field or method name");
        }
        advance();
        if (accept(TokenKind::kLParen)) {
          auto args = arguments(TokenKind::kRParen, "')'");
          if (!args.ok()) return std::move(args).error();
          auto call = build_call(map_, name.offset, name.text, std::move(node).value(),
                                 std::move(args).value());
          if (!call.ok()) return call;
          node = finish(std::move(call).value());
        } else {
          NodePtr select = make(NodeKind::kSelect, name.offset);
          select->name = name.text;
          select->args.push_back(std::move(node).value());
          node = finish(std::move(select));
        }
      } else if (kind == TokenKind::kLBracket) {
        const std::uint32_t at = advance().offset;
        auto index = expr();
        if (!index.ok()) return index;
        if (auto close = expect(TokenKind::kRBracket, "']'"); !close.ok())
          return std::move(close).error();
        NodePtr node_index = make(NodeKind::kIndex, at);
        node_index->args.push_back(std::move(node).value());
        node_index->args.push_back(std::move(index).value());
        node = finish(std::move(node_index));
      } else if (kind == TokenKind::kLBrace) {
        return map_.error_at(peek().offset, "message construction is not supported");
      } else {
        break;
      }
    }
    return node;
  }

  // Comma-separated expressions up to `close` (already past the opening bracket). A trailing
  // comma is accepted in list literals only.
  Result<std::vector<NodePtr>> arguments(TokenKind close, std::string_view close_text,
                                         bool trailing_comma = false) {
    std::vector<NodePtr> items;
    if (accept(close)) return items;
    while (true) {
      auto item = expr();
      if (!item.ok()) return std::move(item).error();
      items.push_back(std::move(item).value());
      if (accept(close)) return items;
      if (auto comma = expect(TokenKind::kComma, "',' or " + std::string(close_text));
          !comma.ok()) {
        return std::move(comma).error();
      }
      if (trailing_comma && accept(close)) return items;
    }
  }

  Result<NodePtr> map_literal(std::uint32_t at) {
    NodePtr node = make(NodeKind::kMap, at);
    if (accept(TokenKind::kRBrace)) return finish(std::move(node));
    while (true) {
      auto key = expr();
      if (!key.ok()) return key;
      if (auto colon = expect(TokenKind::kColon, "':'"); !colon.ok())
        return std::move(colon).error();
      auto value = expr();
      if (!value.ok()) return value;
      node->args.push_back(std::move(key).value());
      node->args.push_back(std::move(value).value());
      if (accept(TokenKind::kRBrace)) break;
      if (auto comma = expect(TokenKind::kComma, "',' or '}'"); !comma.ok())
        return std::move(comma).error();
      if (accept(TokenKind::kRBrace)) break;
    }
    return finish(std::move(node));
  }

  Result<NodePtr> identifier(const Token& name) {
    if (is_reserved(name.text)) {
      return map_.error_at(name.offset,
                           "reserved word '" + name.text + "' cannot be used as a name");
    }
    if (accept(TokenKind::kLParen)) {
      auto args = arguments(TokenKind::kRParen, "')'");
      if (!args.ok()) return std::move(args).error();
      auto call = build_call(map_, name.offset, name.text, nullptr, std::move(args).value());
      if (!call.ok()) return call;
      return finish(std::move(call).value());
    }
    NodePtr node = make(NodeKind::kIdent, name.offset);
    node->name = name.text;
    return node;
  }

  Result<NodePtr> literal(const Token& t, Value value) {
    NodePtr node = make(NodeKind::kLiteral, t.offset);
    node->value = std::move(value);
    return node;
  }

  Result<NodePtr> primary() {
    const Token& t = advance();
    switch (t.kind) {
      case TokenKind::kIdent:
        return identifier(t);
      case TokenKind::kDot: {
        // A leading dot names the root scope; with no containers, that is the plain name.
        const Token& name = advance();
        if (name.kind != TokenKind::kIdent) return unexpected(name);
        return identifier(name);
      }
      case TokenKind::kLParen: {
        auto inner = expr();
        if (!inner.ok()) return inner;
        if (auto close = expect(TokenKind::kRParen, "')'"); !close.ok())
          return std::move(close).error();
        return inner;
      }
      case TokenKind::kLBracket: {
        auto items = arguments(TokenKind::kRBracket, "']'", /*trailing_comma=*/true);
        if (!items.ok()) return std::move(items).error();
        NodePtr node = make(NodeKind::kList, t.offset);
        node->args = std::move(items).value();
        return finish(std::move(node));
      }
      case TokenKind::kLBrace:
        return map_literal(t.offset);
      case TokenKind::kInt:
        if (t.number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          return map_.error_at(t.offset, "integer literal out of range");
        }
        return literal(t, Value::from_int(static_cast<std::int64_t>(t.number)));
      case TokenKind::kUint:
        return literal(t, Value::from_uint(t.number));
      case TokenKind::kDouble:
        return literal(t, Value::from_double(t.real));
      case TokenKind::kString:
        return literal(t, Value::from_string(t.text));
      case TokenKind::kBytes:
        return literal(t, Value::from_bytes(t.text));
      case TokenKind::kTrue:
        return literal(t, Value::from_bool(true));
      case TokenKind::kFalse:
        return literal(t, Value::from_bool(false));
      case TokenKind::kNull:
        return literal(t, Value());
      default:
        return unexpected(t);
    }
  }

  const std::vector<Token>& tokens_;
  const SourceMap& map_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

Result<NodePtr> parse(const std::vector<Token>& tokens, const SourceMap& map) {
  return Parser(tokens, map).parse_all();
}

}  // namespace holdfast::cel
