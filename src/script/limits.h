// The limits a script runs under (docs/resp.md, "Scripts"). Defaults are those documented for
// `[limits] scriptTimeLimitMs` in docs/configuration.md.
#pragma once

#include <cstddef>

#include "core/clock.h"

namespace holdfast::script {

inline constexpr Millis kDefaultTimeLimitMs = 5000;
inline constexpr Millis kMaxTimeLimitMs = 3'600'000;
inline constexpr std::size_t kDefaultMemoryBytes = std::size_t{64} << 20;

struct Limits {
  // How long one script may run before it is stopped (its changes so far stay).
  Millis time_ms = kDefaultTimeLimitMs;
  // What the Lua state may hold in all: cached scripts, and what a running script allocates.
  std::size_t memory_bytes = kDefaultMemoryBytes;
};

}  // namespace holdfast::script
