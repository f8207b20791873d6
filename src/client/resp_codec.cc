// RESP2/RESP3 encoding and parsing for the client (see resp_codec.h).
#include "client/resp_codec.h"

#include <charconv>

#include "holdfast/errors.h"

namespace holdfast::inline v0::client_internal {
namespace {

// Bounds that keep a corrupt or hostile stream from making us allocate without limit.
constexpr std::int64_t kMaxBulk = 64 * 1024 * 1024;
constexpr std::int64_t kMaxItems = 1024 * 1024;
constexpr int kMaxDepth = 16;

[[noreturn]] void malformed(const std::string& what) {
  throw ProtocolError("malformed reply from the server: " + what);
}

std::int64_t number(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    malformed("'" + std::string(text.substr(0, 32)) + "' is not an integer");
  return v;
}

class Parser {
 public:
  explicit Parser(std::string_view buf) : buf_(buf) {}

  // False when the buffer ends before the value does.
  bool value(Reply* out, int depth) {
    if (depth > kMaxDepth) malformed("nesting deeper than " + std::to_string(kMaxDepth));
    if (pos_ >= buf_.size()) return false;
    char tag = buf_[pos_++];
    std::string_view line;
    if (!read_line(&line)) return false;
    switch (tag) {
      case '+':
        out->type = Reply::Type::kSimple;
        out->str = std::string(line);
        return true;
      case '-':
        out->type = Reply::Type::kError;
        out->str = std::string(line);
        return true;
      case ':':
        out->type = Reply::Type::kInteger;
        out->integer = number(line);
        return true;
      case '_':
        out->type = Reply::Type::kNull;
        return true;
      case '#':
        out->type = Reply::Type::kBool;
        if (line != "t" && line != "f") malformed("boolean '" + std::string(line) + "'");
        out->integer = line == "t" ? 1 : 0;
        return true;
      case ',':
        out->type = Reply::Type::kDouble;
        out->str = std::string(line);
        return true;
      case '(':
        out->type = Reply::Type::kBulk;
        out->str = std::string(line);
        return true;
      case '$':
      case '=':
      case '!':
        return bulk(tag, number(line), out);
      case '*':
      case '~':
      case '>':
        return aggregate(Reply::Type::kArray, number(line), 1, out, depth);
      case '%':
        return aggregate(Reply::Type::kMap, number(line), 2, out, depth);
      case '|': {
        // An attribute map precedes the real reply; we have no use for it.
        Reply ignored;
        if (!aggregate(Reply::Type::kMap, number(line), 2, &ignored, depth)) return false;
        return value(out, depth);
      }
      default:
        malformed("unknown type byte '" + std::string(1, tag) + "'");
    }
  }

  std::size_t pos() const { return pos_; }

 private:
  bool read_line(std::string_view* line) {
    auto end = buf_.find("\r\n", pos_);
    if (end == std::string_view::npos) {
      if (buf_.size() - pos_ > 64 * 1024) malformed("a header line longer than 64 KiB");
      return false;
    }
    *line = buf_.substr(pos_, end - pos_);
    pos_ = end + 2;
    return true;
  }

  bool bulk(char tag, std::int64_t len, Reply* out) {
    if (len == -1 && tag == '$') {
      out->type = Reply::Type::kNull;
      return true;
    }
    if (len < 0 || len > kMaxBulk) malformed("bulk length " + std::to_string(len));
    auto n = static_cast<std::size_t>(len);
    if (buf_.size() - pos_ < n + 2) return false;
    if (buf_.substr(pos_ + n, 2) != "\r\n") malformed("bulk string not terminated by CRLF");
    std::string_view body = buf_.substr(pos_, n);
    pos_ += n + 2;
    if (tag == '=') body = body.size() >= 4 ? body.substr(4) : body;  // "txt:" prefix
    out->type = tag == '!' ? Reply::Type::kError : Reply::Type::kBulk;
    out->str = std::string(body);
    return true;
  }

  bool aggregate(Reply::Type type, std::int64_t count, int per_entry, Reply* out, int depth) {
    if (count == -1 && type == Reply::Type::kArray) {
      out->type = Reply::Type::kNull;
      return true;
    }
    if (count < 0 || count > kMaxItems) malformed("aggregate length " + std::to_string(count));
    out->type = type;
    auto total = static_cast<std::size_t>(count * per_entry);
    out->items.reserve(std::min<std::size_t>(total, 64));
    for (std::size_t i = 0; i < total; ++i) {
      Reply item;
      if (!value(&item, depth + 1)) return false;
      out->items.push_back(std::move(item));
    }
    return true;
  }

  std::string_view buf_;
  std::size_t pos_ = 0;
};

}  // namespace

const Reply* Reply::field(std::string_view name) const {
  if (type != Type::kMap && type != Type::kArray) return nullptr;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Reply& k = items[i];
    if ((k.type == Type::kBulk || k.type == Type::kSimple) && k.str == name) return &items[i + 1];
  }
  return nullptr;
}

std::string Reply::debug() const {
  switch (type) {
    case Type::kSimple:
      return "+" + str;
    case Type::kError:
      return "-" + str;
    case Type::kInteger:
    case Type::kBool:
      return std::to_string(integer);
    case Type::kBulk:
    case Type::kDouble:
      return "\"" + str + "\"";
    case Type::kNull:
      return "nil";
    case Type::kArray:
    case Type::kMap: {
      std::string out = type == Type::kMap ? "{" : "[";
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += type == Type::kMap && i % 2 ? ": " : ", ";
        out += items[i].debug();
      }
      return out + (type == Type::kMap ? "}" : "]");
    }
  }
  return "?";
}

std::string encode_command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

std::size_t ReplyFramer::complete_length(std::string_view buf) {
  for (;;) {
    if (open_.size() > static_cast<std::size_t>(kMaxDepth))
      malformed("nesting deeper than " + std::to_string(kMaxDepth));
    if (pos_ >= buf.size()) return 0;
    const char tag = buf[pos_];
    const std::size_t end = buf.find("\r\n", pos_ + 1);
    if (end == std::string_view::npos) {
      if (buf.size() - pos_ > 64 * 1024) malformed("a header line longer than 64 KiB");
      return 0;
    }
    const std::string_view line = buf.substr(pos_ + 1, end - pos_ - 1);
    std::size_t next = end + 2;
    bool finished = true;
    switch (tag) {
      case '+':
      case '-':
      case ':':
      case '_':
      case '#':
      case ',':
      case '(':
        break;  // parse_reply() checks what the line says
      case '$':
      case '=':
      case '!': {
        const std::int64_t len = number(line);
        if (len == -1 && tag == '$') break;
        if (len < 0 || len > kMaxBulk) malformed("bulk length " + std::to_string(len));
        if (buf.size() - next < static_cast<std::size_t>(len) + 2)
          return 0;  // the header is read again
        next += static_cast<std::size_t>(len) + 2;
        break;
      }
      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        const std::int64_t count = number(line);
        const bool map = tag == '%' || tag == '|';
        if (count == -1 && !map) break;
        if (count < 0 || count > kMaxItems) malformed("aggregate length " + std::to_string(count));
        if (count > 0) {
          open_.push_back(Open{map ? count * 2 : count, tag == '|'});
          finished = false;
        } else if (tag == '|') {
          finished = false;  // an empty attribute: the value follows
        }
        break;
      }
      default:
        malformed("unknown type byte '" + std::string(1, tag) + "'");
    }
    pos_ = next;
    if (finished && finish_value()) return pos_;
  }
}

bool ReplyFramer::finish_value() {
  while (!open_.empty()) {
    if (--open_.back().remaining > 0) return false;
    const bool attribute = open_.back().attribute;
    open_.pop_back();
    if (attribute) return false;  // the value it annotates is still to come
  }
  return true;
}

void ReplyFramer::reset() {
  pos_ = 0;
  open_.clear();
}

std::optional<ParseOutcome> parse_reply(std::string_view buffer) {
  Parser p(buffer);
  ParseOutcome outcome;
  if (!p.value(&outcome.reply, 0)) return std::nullopt;
  outcome.consumed = p.pos();
  return outcome;
}

}  // namespace holdfast::inline v0::client_internal
