#include "core/validation.h"

#include <charconv>
#include <string>

#include "core/lock_types.h"
#include "core/text.h"

namespace holdfast {
namespace {

// Valid UTF-8 (core/text.h) without C0 controls or DEL.
bool is_clean_utf8(std::string_view s) {
  bool ascii = true;  // the usual key: no second pass for the UTF-8 check
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return false;
    if (u >= 0x80) ascii = false;
  }
  return ascii || is_valid_utf8(s);
}

// Every error names the field it is about (details.field), by its name on the wire.
Error field_error(std::string message, std::string_view field) {
  return invalid_argument(std::move(message)).with("field", std::string(field));
}

}  // namespace

std::optional<Error> check_key(std::string_view key) {
  if (key.empty()) return field_error("key must not be empty", "key");
  if (key.size() > kMaxKeyBytes)
    return field_error("key is longer than 1024 bytes", "key")
        .with("bytes", static_cast<std::int64_t>(key.size()));
  if (!is_clean_utf8(key))
    return field_error("key must be UTF-8 without control characters", "key");
  return std::nullopt;
}

std::optional<Error> check_label(std::string_view value, std::string_view what) {
  std::string name(what);
  if (value.empty()) return field_error(name + " must not be empty", what);
  if (value.size() > kMaxOwnerBytes)
    return field_error(name + " is longer than 256 bytes", what)
        .with("bytes", static_cast<std::int64_t>(value.size()));
  if (!is_clean_utf8(value))
    return field_error(name + " must be UTF-8 without control characters", what);
  return std::nullopt;
}

std::optional<Error> check_ttl(Millis ttl_ms) {
  if (ttl_ms <= 0)
    return field_error("TTL must be a positive number of milliseconds", "ttlMs")
        .with("ttlMs", ttl_ms);
  return std::nullopt;
}

std::optional<Error> check_timeout(Millis timeout_ms) {
  if (timeout_ms < 0)
    return field_error("timeout must be zero or a positive number of milliseconds", "timeoutMs")
        .with("timeoutMs", timeout_ms);
  return std::nullopt;
}

std::optional<Error> check_lock_delay(Millis lock_delay_ms) {
  if (lock_delay_ms < 0 || lock_delay_ms > kMaxLockDelayMs)
    return field_error(
               "lock-delay must be 0 to " + std::to_string(kMaxLockDelayMs) + " milliseconds",
               "lockDelayMs")
        .with("lockDelayMs", lock_delay_ms);
  return std::nullopt;
}

std::optional<Error> check_handle_text(std::string_view handle) {
  if (handle.empty()) return field_error("handle must not be empty", "handle");
  if (handle.size() > 64) return field_error("handle is longer than 64 characters", "handle");
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
