#include "core/validation.h"

#include <charconv>
#include <string>

namespace holdfast {
namespace {

// Validates UTF-8 (no overlongs, no surrogates, max U+10FFFF) and rejects C0 controls and DEL.
bool is_clean_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    unsigned char c = b[i];
    if (c < 0x20 || c == 0x7F) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (std::size_t k = 1; k <= n; ++k) {
      unsigned char cc = b[i + k];
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return false;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace

std::optional<Error> check_key(std::string_view key) {
  if (key.empty()) return invalid_argument("key must not be empty");
  if (key.size() > kMaxKeyBytes)
    return invalid_argument("key is longer than 1024 bytes").with("bytes", static_cast<std::int64_t>(key.size()));
  if (!is_clean_utf8(key))
    return invalid_argument("key must be UTF-8 without control characters");
  return std::nullopt;
}

std::optional<Error> check_label(std::string_view value, std::string_view what) {
  std::string name(what);
  if (value.empty()) return invalid_argument(name + " must not be empty");
  if (value.size() > kMaxOwnerBytes)
    return invalid_argument(name + " is longer than 256 bytes")
        .with("bytes", static_cast<std::int64_t>(value.size()));
  if (!is_clean_utf8(value))
    return invalid_argument(name + " must be UTF-8 without control characters");
  return std::nullopt;
}

std::optional<Error> check_ttl(Millis ttl_ms) {
  if (ttl_ms <= 0) return invalid_argument("TTL must be a positive number of milliseconds").with("ttlMs", ttl_ms);
  return std::nullopt;
}

std::optional<Error> check_timeout(Millis timeout_ms) {
  if (timeout_ms < 0)
    return invalid_argument("timeout must be zero or a positive number of milliseconds")
        .with("timeoutMs", timeout_ms);
  return std::nullopt;
}

std::optional<std::int64_t> parse_int64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t start = text[0] == '-' ? 1 : 0;
  if (start == text.size()) return std::nullopt;
  for (std::size_t i = start; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace holdfast
