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

// The server's clock: the wall clock as it read when this clock was made, advanced by the
// monotonic clock since. Leases are absolute instants on it, so they keep their meaning across
// a restart (which reads the wall clock anew), while a step of the host's wall clock as the
// server runs (a manual `date`, an NTP step, a resumed VM) neither ends a lease early nor
// stretches it: a lease lasts its TTL of real time, as its holder measures it. NTP's slewing
// moves both clocks alike. docs/ARCHITECTURE.md, "Clocks".
class SystemClock final : public Clock {
 public:
  SystemClock()
      : wall_at_start_(std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count()),
        steady_at_start_(std::chrono::steady_clock::now()) {}
  Millis now_ms() const override {
    return wall_at_start_ + std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - steady_at_start_)
                                .count();
  }

 private:
  Millis wall_at_start_;
  std::chrono::steady_clock::time_point steady_at_start_;
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
