// The mode of an acquire (docs/lock-kinds.md) as the front ends receive it: a mode word and
// the semaphore's permits and take, read into AcquireArgs by one rule for RESP and HTTP. Each
// front end spells the option names and words its own way; the errors use its spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "service/lock_service.h"

namespace holdfast {

struct ModeSpelling {
  std::string_view mode;     // "MODE" | "mode"
  std::string_view permits;  // "PERMITS" | "permits"
  std::string_view take;     // "TAKE" | "take"
  std::string_view shared;   // "SHARED" | "shared"
  std::string_view exclusive;
};

inline constexpr ModeSpelling kRespSpelling{"MODE", "PERMITS", "TAKE", "SHARED", "EXCLUSIVE"};
inline constexpr ModeSpelling kJsonSpelling{"mode", "permits", "take", "shared", "exclusive"};

// Sets args.mode, args.permits and args.take. The mode word matches case-insensitively;
// permits and take, when given, must be at least 1; permits makes a semaphore and cannot go
// with a mode; take needs permits. INVALID_ARGUMENT otherwise, with `args` unchanged.
std::optional<Error> read_lock_mode(std::optional<std::string_view> mode,
                                    std::optional<std::int64_t> permits,
                                    std::optional<std::int64_t> take, const ModeSpelling& names,
                                    KeyRequest& args);

}  // namespace holdfast
