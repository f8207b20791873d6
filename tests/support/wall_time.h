// The wall clock in the tests: its milliseconds since the Unix epoch (the clock a server's
// acquiredAt and leaseExpiresAt are on), and letting some of it pass.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace holdfast::testing {

inline std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// For a step that must come some time after the one before (never a test's verdict:
// support/eventually.h waits for those).
inline void pause_ms(std::int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace holdfast::testing
