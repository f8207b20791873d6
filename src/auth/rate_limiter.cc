#include "auth/rate_limiter.h"

namespace holdfast {

namespace {
constexpr Millis kMinute = 60'000;
}

void RateLimiter::roll(Window& w, std::int64_t minute) {
  if (minute <= w.minute) return;
  if (minute - w.minute >= 60) {
    w.counts.fill(0);
    w.total = 0;
  } else {
    for (std::int64_t m = w.minute + 1; m <= minute; ++m) {
      auto& slot = w.counts[static_cast<std::size_t>(m % 60)];
      w.total -= slot;
      slot = 0;
    }
  }
  w.minute = minute;
}

RateLimiter::Decision RateLimiter::decide(Window& w, Millis now) const {
  roll(w, now / kMinute);
  if (w.total < cap_) return {};
  // The oldest bucket still in the window leaves it at the start of its minute + 60.
  for (std::int64_t m = w.minute - 59; m <= w.minute; ++m) {
    if (w.counts[static_cast<std::size_t>(((m % 60) + 60) % 60)] > 0) {
      Millis frees_at = (m + 60) * kMinute;
      return {false, frees_at - now};
    }
  }
  return {false, kMinute};
}

RateLimiter::Decision RateLimiter::consume(std::string_view user, Millis now) {
  if (++calls_ % 4096 == 0) sweep(now);
  auto it = users_.find(user);
  if (it == users_.end())
    it = users_.emplace(std::string(user), Window{{}, now / kMinute, 0}).first;
  Decision d = decide(it->second, now);
  if (d.allowed) {
    ++it->second.counts[static_cast<std::size_t>(it->second.minute % 60)];
    ++it->second.total;
  }
  return d;
}

RateLimiter::Decision RateLimiter::peek(std::string_view user, Millis now) {
  auto it = users_.find(user);
  if (it == users_.end()) return {};
  return decide(it->second, now);
}

void RateLimiter::sweep(Millis now) {
  const std::int64_t minute = now / kMinute;
  for (auto it = users_.begin(); it != users_.end();) {
    roll(it->second, minute);
    if (it->second.total == 0) {
      it = users_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace holdfast
