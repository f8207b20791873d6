// Input rules shared by every front end (docs/reference.md sections 1 and 8): keys, owners, holder
// ids, TTLs and timeouts. Each check returns the precise INVALID_ARGUMENT error or nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "core/clock.h"
#include "core/error.h"

namespace holdfast {

inline constexpr std::size_t kMaxKeyBytes = 1024;
inline constexpr std::size_t kMaxOwnerBytes = 256;
inline constexpr Millis kMaxLeaseMs = 86'400'000;  // 24 h

// 1..1024 bytes of valid UTF-8 without bytes below 0x20 or 0x7F.
std::optional<Error> check_key(std::string_view key);
// 1..256 bytes of valid UTF-8 without control bytes. `what` names the field ("owner").
std::optional<Error> check_label(std::string_view value, std::string_view what);
// A TTL must be positive; a timeout zero or positive.
std::optional<Error> check_ttl(Millis ttl_ms);
std::optional<Error> check_timeout(Millis timeout_ms);
// A lock-delay is 0..60 000 milliseconds (kMaxLockDelayMs, docs/lock-kinds.md).
std::optional<Error> check_lock_delay(Millis lock_delay_ms);
// A handle as a caller presents it: empty or longer than 64 characters is an error; anything
// else that is not one of the server's handles simply does not match a hold.
std::optional<Error> check_handle_text(std::string_view handle);

// Parses a strict decimal 64-bit integer ("1e3", "1.0", "+5", " 5" are not integers).
std::optional<std::int64_t> parse_int64(std::string_view text);

}  // namespace holdfast
