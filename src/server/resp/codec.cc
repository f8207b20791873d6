#include "server/resp/codec.h"

#include <charconv>
#include <cstring>

#include "core/values/redis_numbers.h"

namespace holdfast::resp {
namespace {

// Reads a decimal integer terminated by CRLF at data[pos...]. Returns false if the line is not
// complete yet (*incomplete = true) or is not a valid integer.
bool read_number_line(std::string_view data, std::size_t pos, std::int64_t* value,
                      std::size_t* next, bool* incomplete) {
  const char* start = data.data() + pos;
  const void* cr = std::memchr(start, '\r', data.size() - pos);
  if (cr == nullptr || static_cast<const char*>(cr) + 1 >= data.data() + data.size()) {
    *incomplete = data.size() - pos <= 32;  // a length line is short; a long one is garbage
    return false;
  }
  const char* end = static_cast<const char*>(cr);
  if (end[1] != '\n') return false;
  auto [ptr, ec] = std::from_chars(start, end, *value);
  if (ec != std::errc() || ptr != end || start == end) return false;
  *next = static_cast<std::size_t>(end - data.data()) + 2;
  return true;
}

}  // namespace

ParseStatus RequestParser::fail(std::string message) {
  error_ = std::move(message);
  args_.clear();
  return ParseStatus::kError;
}

ParseStatus RequestParser::parse(std::string_view data, std::size_t* consumed) {
  args_.clear();
  if (data.empty()) return ParseStatus::kIncomplete;
  if (data[0] != '*') return parse_inline(data, consumed);

  std::int64_t count = 0;
  std::size_t pos = 0;
  bool incomplete = false;
  if (!read_number_line(data, 1, &count, &pos, &incomplete)) {
    if (incomplete) return ParseStatus::kIncomplete;
    return fail("invalid multibulk length");
  }
  if (count < 0) {  // a null array is not a command; skip it like an empty line
    *consumed = pos;
    return ParseStatus::kComplete;
  }
  if (static_cast<std::size_t>(count) > limits_.max_args)
    return fail("too many arguments (at most " + std::to_string(limits_.max_args) + ")");
  args_.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    if (pos >= data.size()) return args_.clear(), ParseStatus::kIncomplete;
    if (data[pos] != '$')
      return fail(std::string("expected '$', got '") +
                  (data[pos] >= 0x20 && data[pos] < 0x7f ? std::string(1, data[pos]) : "\\x??") +
                  "'");
    std::int64_t len = 0;
    std::size_t body = 0;
    if (!read_number_line(data, pos + 1, &len, &body, &incomplete)) {
      if (incomplete) return args_.clear(), ParseStatus::kIncomplete;
      return fail("invalid bulk length");
    }
    if (len < 0) return fail("invalid bulk length");
    if (static_cast<std::size_t>(len) > limits_.max_frame_bytes ||
        body + static_cast<std::size_t>(len) > limits_.max_frame_bytes + 1024)
      return fail("command is larger than " + std::to_string(limits_.max_frame_bytes) + " bytes");
    std::size_t end = body + static_cast<std::size_t>(len);
    if (end + 2 > data.size()) return args_.clear(), ParseStatus::kIncomplete;
    if (data[end] != '\r' || data[end + 1] != '\n')
      return fail("bulk string not terminated by CRLF");
    args_.emplace_back(data.data() + body, static_cast<std::size_t>(len));
    pos = end + 2;
  }
  *consumed = pos;
  return ParseStatus::kComplete;
}

// Inline commands ("PING\r\n"), as typed into telnet or nc: words separated by spaces.
ParseStatus RequestParser::parse_inline(std::string_view data, std::size_t* consumed) {
  std::size_t nl = data.find('\n');
  if (nl == std::string_view::npos) {
    if (data.size() > limits_.max_inline_bytes) return fail("inline command too long");
    return ParseStatus::kIncomplete;
  }
  if (nl > limits_.max_inline_bytes) return fail("inline command too long");
  std::string_view line = data.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) {
      if (args_.size() == limits_.max_args) return fail("too many arguments");
      args_.push_back(line.substr(start, i - start));
    }
  }
  *consumed = nl + 1;
  return ParseStatus::kComplete;
}

namespace {

// Writes `type`, `n` and CRLF at p; returns the end. At most 23 bytes.
char* put_header(char* p, char type, std::int64_t n) {
  *p++ = type;
  p = std::to_chars(p, p + 20, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

// A bulk string at p: at most s.size() + 25 bytes.
char* put_bulk(char* p, std::string_view s) {
  p = put_header(p, '$', static_cast<std::int64_t>(s.size()));
  std::memcpy(p, s.data(), s.size());
  p += s.size();
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

char* put_null(char* p, int proto) {
  const std::string_view null = proto >= 3 ? std::string_view("_\r\n", 3) : "$-1\r\n";
  std::memcpy(p, null.data(), null.size());
  return p + null.size();
}

}  // namespace

void ReplyWriter::field(std::string_view name, std::string_view value) {
  if (name.size() + value.size() > kShort) {
    bulk(name);
    bulk(value);
    return;
  }
  char buf[kShort + 2 * 25];
  char* p = put_bulk(put_bulk(buf, name), value);
  out_.append(buf, static_cast<std::size_t>(p - buf));
}

void ReplyWriter::field(std::string_view name, std::int64_t value) {
  if (name.size() > kShort) {
    bulk(name);
    integer(value);
    return;
  }
  char buf[kShort + 25 + 23];
  char* p = put_header(put_bulk(buf, name), ':', value);
  out_.append(buf, static_cast<std::size_t>(p - buf));
}

void ReplyWriter::null_field(std::string_view name) {
  if (name.size() > kShort) {
    bulk(name);
    null();
    return;
  }
  char buf[kShort + 25 + 5];
  char* p = put_null(put_bulk(buf, name), proto_);
  out_.append(buf, static_cast<std::size_t>(p - buf));
}

void ReplyWriter::header(char type, std::int64_t n) {
  char buf[24];
  out_.append(buf, static_cast<std::size_t>(put_header(buf, type, n) - buf));
}

void ReplyWriter::simple(std::string_view s) {
  out_.push_back('+');
  out_.append(s);
  out_.append("\r\n", 2);
}

void ReplyWriter::error_line(std::string_view line) {
  out_.push_back('-');
  for (char c : line) out_.push_back(c == '\r' || c == '\n' ? ' ' : c);
  out_.append("\r\n", 2);
}

void ReplyWriter::integer(std::int64_t v) { header(':', v); }

void ReplyWriter::bulk(std::string_view s) {
  if (s.size() <= kShort) {
    char buf[kShort + 25];
    out_.append(buf, static_cast<std::size_t>(put_bulk(buf, s) - buf));
    return;
  }
  header('$', static_cast<std::int64_t>(s.size()));
  out_.append(s);
  out_.append("\r\n", 2);
}

void ReplyWriter::null() {
  char buf[5];
  out_.append(buf, static_cast<std::size_t>(put_null(buf, proto_) - buf));
}

void ReplyWriter::null_array() {
  if (proto_ >= 3) {
    out_.append("_\r\n", 3);
  } else {
    out_.append("*-1\r\n", 5);
  }
}

void ReplyWriter::double_value(double v) {
  const std::string text = format_redis_double(v);
  if (proto_ < 3) {
    bulk(text);
    return;
  }
  out_.push_back(',');
  out_.append(text);
  out_.append("\r\n", 2);
}

void ReplyWriter::array(std::size_t n) { header('*', static_cast<std::int64_t>(n)); }

void ReplyWriter::map(std::size_t pairs) {
  if (proto_ >= 3) {
    header('%', static_cast<std::int64_t>(pairs));
  } else {
    header('*', static_cast<std::int64_t>(pairs * 2));
  }
}

void ReplyWriter::set(std::size_t n) {
  header(proto_ >= 3 ? '~' : '*', static_cast<std::int64_t>(n));
}

void ReplyWriter::push(std::size_t n) {
  header(proto_ >= 3 ? '>' : '*', static_cast<std::int64_t>(n));
}

void ReplyWriter::verbatim(std::string_view text) {
  if (proto_ < 3) {
    bulk(text);
    return;
  }
  header('=', static_cast<std::int64_t>(text.size() + 4));
  out_.append("txt:", 4);
  out_.append(text);
  out_.append("\r\n", 2);
}

}  // namespace holdfast::resp
