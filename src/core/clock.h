// Time as the lock table sees it: integer milliseconds since the Unix epoch, taken from an
// injected Clock so tests drive time by hand.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

namespace holdfast {

using Millis = std::int64_t;  // milliseconds since the Unix epoch (or a duration in ms)
inline constexpr Millis kNever = std::numeric_limits<Millis>::max();

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Millis now_ms() const = 0;
};

// Wall-clock time. Leases are stored as absolute wall-clock instants (they survive restarts);
// docs/ARCHITECTURE.md says what a clock jump does.
class SystemClock final : public Clock {
 public:
  Millis now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Millis start = 1'700'000'000'000) : now_(start) {}
  Millis now_ms() const override { return now_; }
  void advance(Millis ms) { now_ += ms; }
  void set(Millis at) { now_ = at; }

 private:
  Millis now_;
};

}  // namespace holdfast
