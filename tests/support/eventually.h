// How long a test waits for something that must happen (a reply, a line of output, a state it
// polls for) before it calls it a hang. Long enough that a machine busy with other builds
// never reaches it; it bounds a wait, never asserts a speed (speed is measured in bench/).
#pragma once

#include <chrono>

namespace holdfast::testing {

inline constexpr int kEventuallyMs = 60'000;
inline constexpr std::chrono::milliseconds kEventually{kEventuallyMs};

}  // namespace holdfast::testing
