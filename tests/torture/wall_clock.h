// Wall-clock time for the torture program. The server reports acquiredAt and leaseExpiresAt in
// milliseconds since the Unix epoch and runs on the same machine, so the program measures its
// own moments on that clock too (in microseconds) and compares them with the server's.
#pragma once

#include <chrono>
#include <cstdint>

#include "support/wall_time.h"

namespace holdfast::torture {

inline std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using testing::pause_ms;
using testing::wall_ms;

}  // namespace holdfast::torture
