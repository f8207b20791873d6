// The one error for a request of the wrong kind for its key (docs/lock-kinds.md): a key is a
// lock or a semaphore of some number of permits for as long as it has holds or waiters. Every
// backend answers it in these words.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/error.h"

namespace holdfast {

// `current` and `wanted` are kinds: 0 for a lock (exclusive and shared holds), else the
// semaphore's permits. REQUIRES: current != wanted.
Error kind_conflict_error(std::string_view key, std::uint32_t current, std::uint32_t wanted);

}  // namespace holdfast
