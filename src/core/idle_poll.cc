#include "core/idle_poll.h"

#include <algorithm>
#include <chrono>

namespace holdfast {

IdlePoll::IdlePoll(Micros max_us)
    : max_(std::max<Micros>(max_us, 0)), grow_start_(std::max<Micros>(max_ / 4, 1)) {}

IdlePoll::Micros IdlePoll::steady_now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool IdlePoll::keep_polling(Micros now) {
  if (!idle_since_) idle_since_ = now;
  if (now - *idle_since_ < window_) return true;
  polled_total_ += now - *idle_since_;
  return false;
}

void IdlePoll::found_work(Micros now) {
  if (idle_since_) polled_total_ += now - *idle_since_;
  idle_since_.reset();
}

void IdlePoll::woke(Micros now) {
  const Micros idle = idle_since_ ? now - *idle_since_ : max_ + 1;
  idle_since_.reset();
  if (max_ == 0) return;
  if (idle <= max_) {
    window_ = window_ == 0 ? grow_start_ : std::min(window_ * 2, max_);
  } else {
    window_ /= 2;
    if (window_ < grow_start_) window_ = 0;
  }
}

}  // namespace holdfast
