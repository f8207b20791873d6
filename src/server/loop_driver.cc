#include "server/loop_driver.h"

#include <boost/asio/post.hpp>
#include <chrono>

namespace holdfast {

LoopDriver::LoopDriver(boost::asio::io_context& io, EmbeddedService* embedded)
    : io_(io), service_(embedded), timer_(io) {}

void LoopDriver::after_event() {
  if (service_ == nullptr) return;
  service_->dispatch_outcomes();
  service_->store().submit();
  if (stopped_) return;
  auto next = service_->next_deadline();
  if (next && (!armed_ || *next < *armed_)) arm(*next);
}

void LoopDriver::arm(Millis at) {
  armed_ = at;
  Millis delay = at - service_->clock().now_ms();
  if (delay < 0) delay = 0;
  timer_.expires_after(std::chrono::milliseconds(delay));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed or stopped
    armed_.reset();
    service_->advance();
    after_event();
  });
}

void LoopDriver::wait_durable(std::function<void()> fn) {
  durable_waiters_.push_back(std::move(fn));
  // The store may have advanced between the caller's check and now.
  if (service_ == nullptr || service_->durable_sequence() >= service_->last_sequence()) store_advanced();
}

void LoopDriver::store_advanced() {
  if (durable_post_pending_.exchange(true)) return;  // one post covers any number of syncs
  boost::asio::post(io_, [this] {
    durable_post_pending_ = false;
    run_durable_waiters();
  });
}

void LoopDriver::run_durable_waiters() {
  std::vector<std::function<void()>> waiters;
  waiters.swap(durable_waiters_);
  for (auto& fn : waiters) fn();
}

void LoopDriver::stop() {
  stopped_ = true;
  timer_.cancel();
}

}  // namespace holdfast
