// LoopDriver: the points of the event loop where the lock table's time and the store's
// durability meet the connections.
//
//  1. after_event(), called once after every batch of work (a connection's pipeline, a timer,
//     a disconnect), delivers queued waiter outcomes and re-arms the single deadline timer if
//     the table's next deadline moved earlier. Wake-ups happen here, never from inside another
//     handler (as in Redis's beforeSleep). It also hands the changes just made to the store
//     (submit()): at once, not at the end of the turn, so a free log writer starts syncing
//     while the loop serves the other connections of the same turn.
//  2. The timer fires at the table's earliest deadline: advance, then after_event().
//  3. Connections whose replies wait for durability register with wait_durable(); when the
//     store's syncer thread reports progress, store_advanced() posts to the loop and every
//     waiting connection tries to flush again.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/embedded_service.h"

namespace holdfast {

class LoopDriver {
 public:
  // `embedded` is null when the locks live elsewhere (PostgreSQL): then there is no table to
  // drive, and every reply is durable when made.
  LoopDriver(boost::asio::io_context& io, EmbeddedService* embedded);

  void after_event();
  // fn runs on the loop after the store's durable sequence next advances.
  void wait_durable(std::function<void()> fn);
  // Thread-safe: called by the store's syncer.
  void store_advanced();
  void stop();
  // True while some reply waits for the store's next sync: the loop's next work is then the
  // syncer's report, which is sure to come.
  bool awaiting_durability() const { return !durable_waiters_.empty(); }

 private:
  void arm(Millis at);
  void run_durable_waiters();

  boost::asio::io_context& io_;
  EmbeddedService* service_;
  boost::asio::steady_timer timer_;
  std::optional<Millis> armed_;
  std::vector<std::function<void()>> durable_waiters_;
  std::atomic<bool> durable_post_pending_{false};
  bool stopped_ = false;
};

}  // namespace holdfast
