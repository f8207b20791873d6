#include "core/kind_conflict.h"

#include <string>

namespace holdfast {

Error kind_conflict_error(std::string_view key, std::uint32_t current, std::uint32_t wanted) {
  const std::string k(key);
  if (current == 0)
    return invalid_argument("the key is a lock; it cannot be acquired as a semaphore")
        .with("key", k);
  if (wanted == 0)
    return invalid_argument("the key is a semaphore of " + std::to_string(current) +
                            " permits; acquire it with PERMITS " + std::to_string(current))
        .with("key", k);
  return invalid_argument("the key is a semaphore of " + std::to_string(current) +
                          " permits, not " + std::to_string(wanted))
      .with("key", k);
}

}  // namespace holdfast
