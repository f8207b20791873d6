// Rate limits (docs/reference.md section 4): acquire attempts per member user over a rolling hour.
//
// Each active user has 60 one-minute buckets (a ring indexed by minute). An attempt is allowed
// while the sum of the last 60 buckets is under the cap; it is then counted in the current
// minute's bucket. When over the cap, retry_after is the time until the oldest non-empty bucket
// leaves the window. The window is therefore rolling with one-minute granularity: an attempt
// stops counting between 59 and 60 minutes after it was made.
//
// Memory is bounded by the users active in the last hour (about 300 bytes each), not by the
// number of requests: users whose last attempt left the window are swept out.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/clock.h"
#include "core/lock_types.h"  // StringHash

namespace holdfast {

class RateLimiter {
 public:
  explicit RateLimiter(std::int64_t per_hour) : cap_(per_hour) {}

  struct Decision {
    bool allowed = true;
    Millis retry_after_ms = 0;  // when not allowed: wait at least this long
  };

  // Counts one attempt for `user` if the cap allows it.
  Decision consume(std::string_view user, Millis now);
  // What consume() would answer, without counting.
  Decision peek(std::string_view user, Millis now);

  std::size_t tracked_users() const { return users_.size(); }
  std::int64_t cap() const { return cap_; }
  // Windows already counted keep their counts under the new cap.
  void set_cap(std::int64_t per_hour) { cap_ = per_hour; }

 private:
  struct Window {
    std::array<std::uint32_t, 60> counts{};
    std::int64_t minute = 0;  // the minute the newest bucket belongs to
    std::int64_t total = 0;
  };
  static void roll(Window& w, std::int64_t minute);
  Decision decide(Window& w, Millis now) const;
  void sweep(Millis now);

  std::int64_t cap_;
  std::unordered_map<std::string, Window, StringHash, std::equal_to<>> users_;
  std::uint64_t calls_ = 0;
};

}  // namespace holdfast
