// LoopDriver: the points of the event loop where the lock service's time and its deferred
// answers meet the connections.
//
//  1. after_event(), called once after every batch of work (a connection's pipeline, a timer,
//     a disconnect, a wake-up), lets the service dispatch() what became ready (waiters'
//     outcomes, answers the log made durable, database answers; it also hands new log
//     records to the writer), re-arms the single deadline timer if the service's next
//     deadline moved earlier, and then sends the replies of every connection that received
//     answers outside its own turn (flush_later). Wake-ups happen here, never from inside
//     another handler (as in Redis's beforeSleep), and replies leave in one write per
//     connection per turn.
//  2. The timer fires at the service's earliest deadline: advance(), then after_event().
//  3. wake() (thread-safe) is the service's WakeLoop: the log writer after a sync, a database
//     thread with an answer. Any number of wakes before the loop gets to it make one turn.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "core/clock.h"
#include "service/lock_service.h"

namespace holdfast {

// Drops the reference `self` from the loop rather than here, where the object it points to may
// still be in use by the caller (a connection letting go of itself when its last call ends).
template <typename T>
void let_go_from_loop(boost::asio::io_context& io, std::shared_ptr<T>& self) {
  if (self) boost::asio::post(io, [doomed = std::move(self)] {});
}

// A connection whose replies can be sent from the loop.
class ReplySender {
 public:
  virtual ~ReplySender() = default;
  virtual void flush() = 0;
};

class LoopDriver {
 public:
  LoopDriver(boost::asio::io_context& io, const Clock& clock);

  // Set once, before serving.
  void set_service(LockService& service) { service_ = &service; }
  void after_event();
  void wake();
  WakeLoop waker() {
    return [this] { wake(); };
  }
  void flush_later(std::shared_ptr<ReplySender> sender);
  void stop();

 private:
  void arm(Millis at);

  boost::asio::io_context& io_;
  const Clock& clock_;
  LockService* service_ = nullptr;
  boost::asio::steady_timer timer_;
  std::optional<Millis> armed_;
  std::vector<std::shared_ptr<ReplySender>> to_flush_, flushing_;
  std::atomic<bool> wake_pending_{false};
  bool stopped_ = false;
};

}  // namespace holdfast
