#include "server/resp/usage_grammar.h"

#include <cctype>

#include "server/resp/ascii.h"

namespace holdfast::resp {
namespace {

struct Node {
  enum class Kind { kWord, kArg, kGroup, kOneOf } kind;
  std::string text;  // the word, or the argument's name
  bool multiple = false;
  std::vector<Node> children;  // a group's line, or the alternatives of a one-of
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<std::vector<Node>> line(bool in_group) {
    std::vector<Node> items;
    while (true) {
      skip_spaces();
      if (at_end()) {
        if (in_group) return std::nullopt;  // an unclosed '['
        break;
      }
      if (s_[i_] == ']') {
        if (!in_group) return std::nullopt;
        ++i_;
        break;
      }
      auto item = alternatives();
      if (!item) return std::nullopt;
      items.push_back(std::move(*item));
    }
    if (items.empty()) return std::nullopt;
    return items;
  }

 private:
  std::optional<Node> alternatives() {
    auto first = primary();
    if (!first) return std::nullopt;
    if (at_end() || s_[i_] != '|') return first;
    Node one_of{Node::Kind::kOneOf, {}, false, {std::move(*first)}};
    while (!at_end() && s_[i_] == '|') {
      ++i_;
      auto next = primary();
      if (!next) return std::nullopt;
      one_of.children.push_back(std::move(*next));
    }
    return one_of;
  }

  std::optional<Node> primary() {
    if (at_end()) return std::nullopt;
    if (s_[i_] == '[') {
      ++i_;
      auto inner = line(/*in_group=*/true);
      if (!inner) return std::nullopt;
      return Node{Node::Kind::kGroup, {}, false, std::move(*inner)};
    }
    if (s_[i_] == '<') {
      const auto end = s_.find('>', i_);
      if (end == std::string_view::npos || end == i_ + 1) return std::nullopt;
      Node arg{Node::Kind::kArg, std::string(s_.substr(i_ + 1, end - i_ - 1)), false, {}};
      i_ = end + 1;
      if (s_.substr(i_, 3) == "...") {
        arg.multiple = true;
        i_ += 3;
      }
      return arg;
    }
    const std::size_t start = i_;
    while (!at_end() && (std::isupper(static_cast<unsigned char>(s_[i_])) ||
                         std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-'))
      ++i_;
    if (i_ == start) return std::nullopt;
    return Node{Node::Kind::kWord, std::string(s_.substr(start, i_ - start)), false, {}};
  }

  void skip_spaces() {
    while (!at_end() && s_[i_] == ' ') ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }

  std::string_view s_;
  std::size_t i_ = 0;
};

std::string type_of(const std::string& name) {
  if (name == "key") return "key";
  if (name == "ms" || name == "n" || name == "index" || name == "id" || name == "seconds")
    return "integer";
  if (name == "glob") return "pattern";
  return "string";
}

std::vector<ArgumentDoc> convert(const std::vector<Node>& line);

ArgumentDoc convert_one(const Node& node) {
  switch (node.kind) {
    case Node::Kind::kWord:
      return ArgumentDoc{ascii_lower(node.text), "pure-token", node.text, false, false, {}};
    case Node::Kind::kArg:
      return ArgumentDoc{node.text, type_of(node.text), "", false, node.multiple, {}};
    case Node::Kind::kOneOf: {
      ArgumentDoc doc{"", "oneof", "", false, false, {}};
      for (const auto& alt : node.children) {
        doc.arguments.push_back(convert_one(alt));
        doc.name += (doc.name.empty() ? "" : "|") + doc.arguments.back().name;
      }
      return doc;
    }
    case Node::Kind::kGroup: {
      // [WORD x y ...]: a block whose token is WORD. Anything else of more than one part is a
      // block without a token; one part is that part, optional.
      const auto& parts = node.children;
      const bool token_block = parts.size() > 2 && parts[0].kind == Node::Kind::kWord;
      std::vector<ArgumentDoc> inner =
          convert(token_block ? std::vector<Node>(parts.begin() + 1, parts.end()) : parts);
      ArgumentDoc doc;
      if (inner.size() == 1 && !token_block) {
        doc = std::move(inner[0]);
      } else {
        doc.type = "block";
        if (token_block) doc.token = parts[0].text;
        for (const auto& a : inner) doc.name += (doc.name.empty() ? "" : "-") + a.name;
        doc.arguments = std::move(inner);
      }
      doc.optional = true;
      return doc;
    }
  }
  return {};
}

std::vector<ArgumentDoc> convert(const std::vector<Node>& line) {
  std::vector<ArgumentDoc> out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const Node& n = line[i];
    if (n.kind == Node::Kind::kWord && i + 1 < line.size() &&
        line[i + 1].kind == Node::Kind::kArg) {
      ArgumentDoc doc = convert_one(line[i + 1]);
      doc.token = n.text;
      out.push_back(std::move(doc));
      ++i;
    } else {
      out.push_back(convert_one(n));
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<ArgumentDoc>> parse_usage(std::string_view usage,
                                                    std::size_t skip_words) {
  std::size_t at = 0;
  for (std::size_t w = 0; w < skip_words; ++w) {
    const auto space = usage.find(' ', at);
    if (space == std::string_view::npos) {
      at = usage.size();
      break;
    }
    at = space + 1;
  }
  const std::string_view rest = usage.substr(at);
  if (rest.empty()) return std::vector<ArgumentDoc>{};
  auto line = Parser(rest).line(/*in_group=*/false);
  if (!line) return std::nullopt;
  return convert(*line);
}

}  // namespace holdfast::resp
