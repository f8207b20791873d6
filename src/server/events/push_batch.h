// PushBatch: when a reader's lock events leave its connection, for `LOCK.WATCH`
// (resp/connection.cc) and `GET /v1/events` (http/event_stream.cc) alike (docs/events.md,
// "Batches").
//
// A watcher of a busy server gets events in nearly every loop turn; a write per turn and watcher
// would cost the lock path more than the events do (docs/performance-log.md, "Lock events and
// pub/sub"). So events wait up to kDelay for the ones after them, or until kBytes wait, and
// then leave with one write. Replies and the frames that end a watch (a reset) do not wait.
//
// On the event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

namespace holdfast::events {

class PushBatch {
 public:
  static constexpr std::chrono::milliseconds kDelay{10};
  static constexpr std::size_t kBytes = 256 * 1024;

  explicit PushBatch(boost::asio::io_context& io) : io_(io) {}
  PushBatch(const PushBatch&) = delete;
  PushBatch& operator=(const PushBatch&) = delete;

  // Events were added and `waiting` bytes wait to leave. True: the batch is full, the caller
  // sends it now. Otherwise, unless a batch is already under way, make_send() gives the
  // callable that sends, run on the loop kDelay from now (it must keep alive what it uses; it
  // is not run once the batch is destroyed). make_send is called only to start a batch, so a
  // busy watcher pays no more per event than this test.
  template <typename MakeSend>
  bool add(std::size_t waiting, MakeSend&& make_send) {
    if (waiting >= kBytes) return true;
    if (armed_) return false;
    armed_ = true;
    if (!timer_) timer_.emplace(io_);  // made on first use: most connections never watch
    timer_->expires_after(kDelay);
    timer_->async_wait([alive = std::weak_ptr<char>(alive_), this,
                        send = make_send()](const boost::system::error_code& ec) mutable {
      if (ec || alive.expired()) return;
      armed_ = false;
      send();
    });
    return false;
  }

  // Whether a batch waits for its moment.
  bool armed() const { return armed_; }
  // The connection closed: the batch waits no more (a handler already queued may still run
  // its send, which finds the connection closed).
  void cancel() {
    if (timer_) timer_->cancel();
    armed_ = false;
  }

 private:
  boost::asio::io_context& io_;
  std::optional<boost::asio::steady_timer> timer_;
  bool armed_ = false;
  // A handler already queued when this batch goes away finds it expired.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace holdfast::events
