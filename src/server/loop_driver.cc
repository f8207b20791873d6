#include "server/loop_driver.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <chrono>

namespace holdfast {

LoopDriver::LoopDriver(boost::asio::io_context& io, const Clock& clock)
    : io_(io), clock_(clock), timer_(io) {}

void LoopDriver::after_event() {
  if (service_ != nullptr) {
    service_->dispatch();
    if (!stopped_) {
      auto next = service_->next_deadline();
      if (next && (!armed_ || *next < *armed_)) arm(*next);
    }
  }
  // Senders may be added while these flush (a flush that closes a connection ends its
  // session, which may hand a key to a waiter elsewhere): they go in the next round.
  while (!to_flush_.empty()) {
    flushing_.swap(to_flush_);
    for (auto& sender : flushing_) sender->flush();
    flushing_.clear();
  }
}

void LoopDriver::arm(Millis at) {
  armed_ = at;
  // A deadline may be as far as a value's expiry goes (PEXPIRE takes up to 2^62 ms and more),
  // which in the timer's nanoseconds would overflow into the past and fire at once, again and
  // again. The loop sleeps at most a day; advance() then finds nothing due and the next arm()
  // sleeps again.
  constexpr Millis kLongestSleep = 24 * 3600 * 1000;
  const Millis delay = std::clamp<Millis>(at - clock_.now_ms(), 0, kLongestSleep);
  timer_.expires_after(std::chrono::milliseconds(delay));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed or stopped
    armed_.reset();
    service_->advance();
    after_event();
  });
}

void LoopDriver::wake() {
  if (wake_pending_.exchange(true)) return;  // one turn covers any number of wakes
  boost::asio::post(io_, [this] {
    wake_pending_ = false;
    after_event();
  });
}

void LoopDriver::flush_later(std::shared_ptr<ReplySender> sender) {
  to_flush_.push_back(std::move(sender));
}

void LoopDriver::stop() {
  stopped_ = true;
  timer_.cancel();
}

}  // namespace holdfast
