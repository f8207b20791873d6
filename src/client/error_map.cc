// Parsing RESP error lines and mapping their codes to exception types (see error_map.h).
#include "client/error_map.h"

#include <charconv>
#include <chrono>
#include <optional>
#include <vector>

#include "holdfast/errors.h"

namespace holdfast::inline v0::client_internal {
namespace {

struct Word {
  std::string_view raw;  // as it appears in the line
  std::string name;      // set for name=value words
  std::string value;
  bool is_detail = false;
};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// Decodes a JSON string starting at s[0] == '"'; returns its end (one past the closing quote)
// or npos when it is not a valid JSON string.
std::size_t json_string(std::string_view s, std::string* out) {
  for (std::size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') return i + 1;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= s.size()) return std::string_view::npos;
    switch (s[i]) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'u': {
        unsigned code = 0;
        if (i + 4 >= s.size()) return std::string_view::npos;
        auto [end, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 5, code, 16);
        if (ec != std::errc() || end != s.data() + i + 5) return std::string_view::npos;
        // The server escapes only control bytes this way; wider code points come as UTF-8.
        if (code < 0x80) {
          out->push_back(static_cast<char>(code));
        } else if (code < 0x800) {
          out->push_back(static_cast<char>(0xC0 | (code >> 6)));
          out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
        } else {
          out->push_back(static_cast<char>(0xE0 | (code >> 12)));
          out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
        }
        i += 4;
        break;
      }
      default:
        out->push_back(s[i]);
    }
  }
  return std::string_view::npos;
}

// Splits the text after the code into words; a name="quoted value" is one word.
std::vector<Word> split_words(std::string_view text) {
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    std::size_t start = i, n = 0;
    while (start + n < text.size() && is_name_char(text[start + n])) ++n;
    Word w;
    if (n > 0 && start + n < text.size() && text[start + n] == '=') {
      std::size_t value_at = start + n + 1;
      if (value_at < text.size() && text[value_at] == '"') {
        std::string value;
        std::size_t len = json_string(text.substr(value_at), &value);
        if (len != std::string_view::npos &&
            (value_at + len == text.size() || text[value_at + len] == ' ')) {
          w = Word{text.substr(start, value_at + len - start), std::string(text.substr(start, n)),
                   std::move(value), true};
          words.push_back(std::move(w));
          i = value_at + len;
          continue;
        }
      }
      std::size_t end = text.find(' ', value_at);
      if (end == std::string_view::npos) end = text.size();
      words.push_back(Word{text.substr(start, end - start), std::string(text.substr(start, n)),
                           std::string(text.substr(value_at, end - value_at)), true});
      i = end;
      continue;
    }
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    words.push_back(Word{text.substr(start, end - start), {}, {}, false});
    i = end;
  }
  return words;
}

std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

ServerErrorText parse_error_line(std::string_view line) {
  ServerErrorText out;
  auto space = line.find(' ');
  out.code = std::string(line.substr(0, space));
  if (space == std::string_view::npos) return out;
  std::vector<Word> words = split_words(line.substr(space + 1));
  std::size_t first_detail = words.size();
  while (first_detail > 0 && words[first_detail - 1].is_detail) --first_detail;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i < first_detail) {
      if (!out.message.empty()) out.message.push_back(' ');
      out.message.append(words[i].raw);
    } else {
      out.details[words[i].name] = words[i].value;
    }
  }
  return out;
}

void throw_server_error(std::string_view line) {
  ServerErrorText e = parse_error_line(line);
  const std::string what(line);
  const std::string& c = e.code;
  if (c == "LOCK_TIMEOUT") {
    std::string key = e.details.count("key") ? e.details["key"] : std::string();
    auto timeout = e.details.count("timeoutMs") ? to_int(e.details["timeoutMs"]) : std::nullopt;
    throw LockTimeoutError(key, std::chrono::milliseconds(timeout.value_or(0)), what);
  }
  if (c == "RATE_LIMITED") {
    auto retry = e.details.count("retryAfterMs") ? to_int(e.details["retryAfterMs"]) : std::nullopt;
    throw RateLimitedError(what, std::chrono::milliseconds(retry.value_or(0)),
                           std::move(e.details));
  }
  if (c == "LOCK_ACCESS_DENIED") throw AccessDeniedError(c, what, std::move(e.details));
  if (c == "FORBIDDEN") throw ForbiddenError(c, what, std::move(e.details));
  if (c == "UNAUTHENTICATED") throw UnauthenticatedError(c, what, std::move(e.details));
  // The RESP front end answers with Redis's codes for these (NOAUTH before AUTH, WRONGPASS for
  // bad credentials), so Redis client libraries raise their authentication errors; to callers
  // of this library they are the one UNAUTHENTICATED error, with the server's line kept.
  if (c == "NOAUTH" || c == "WRONGPASS")
    throw UnauthenticatedError("UNAUTHENTICATED", "UNAUTHENTICATED " + what, std::move(e.details));
  if (c == "INVALID_ARGUMENT") throw InvalidArgumentError(c, what, std::move(e.details));
  if (c == "LOCK_HELD") throw LockHeldError(c, what, std::move(e.details));
  if (c == "LOCK_NOT_HOLDER") throw NotHolderError(c, what, std::move(e.details));
  if (c == "RULESET_CONFLICT") throw RulesetConflictError(c, what, std::move(e.details));
  if (c == "UNAVAILABLE") throw UnavailableError(c, what, std::move(e.details));
  if (c == "STORE_UNAVAILABLE") throw StoreUnavailableError(c, what, std::move(e.details));
  throw Error(c, what, std::move(e.details));
}

}  // namespace holdfast::inline v0::client_internal
