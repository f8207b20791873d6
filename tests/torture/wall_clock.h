// Wall-clock time for the torture program. The server reports acquiredAt and leaseExpiresAt in
// milliseconds since the Unix epoch and runs on the same machine, so the program measures its
// own moments on that clock too (in microseconds) and compares them with the server's.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace holdfast::torture {

inline std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t wall_ms() { return wall_us() / 1000; }

inline void pause_ms(std::int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace holdfast::torture
