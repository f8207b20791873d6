// The harness's one clock: CLOCK_MONOTONIC in nanoseconds. Every timestamp that is compared
// (latencies, critical-section intervals, deadlines) comes from here, so they share an origin.
#pragma once

#include <time.h>

#include <cstdint>

namespace holdfast::bench {

inline std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kNsPerSec = 1'000'000'000;

}  // namespace holdfast::bench
