// EventLoop: the load generator's single thread. One epoll set, one timer heap, and a flush
// point after every handler.
//
// An iteration:
//   1. waits in epoll_pwait2 until a socket is ready or the earliest timer is due (with a poll
//      window, polls first: see set_idle_poll_us);
//   2. hands every ready socket to its IoHandler (which parses replies and lets the workload
//      queue its next requests into the connection's output buffer), and right after each one
//      flushes what it queued: one write per connection, however many requests its replies
//      made, and no request waits for the other ready sockets to be read;
//   3. fires the due timers (backoff sleeps), then flushes what they queued the same way;
//   4. after every flush, tells the after-flush hook the time at which those writes were done:
//      a release queued before it has been sent by then (the mutual-exclusion checker closes
//      intervals with it).
// Nothing here blocks, allocates per event, or takes a lock.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "core/idle_poll.h"

namespace holdfast::bench {

class IoHandler {
 public:
  virtual ~IoHandler() = default;
  virtual void on_io(std::uint32_t epoll_events) = 0;
};

// Something with queued output that goes out at the next flush point.
class Flushable {
 public:
  virtual ~Flushable() = default;
  virtual void flush() = 0;

 private:
  friend class EventLoop;
  bool marked_ = false;  // in the loop's dirty list
};

class TimerHandler {
 public:
  virtual ~TimerHandler() = default;
  // `cookie` is what add_timer was given; handlers use it to ignore timers they abandoned.
  virtual void on_timer(std::uint64_t cookie) = 0;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // REQUIRES: fd is not watched yet (watch) / is watched (rewatch, unwatch). The handler must
  // outlive the registration.
  void watch(int fd, std::uint32_t events, IoHandler* handler);
  void rewatch(int fd, std::uint32_t events, IoHandler* handler);
  void unwatch(int fd);

  // Queues `f` for the next flush point; marking it twice flushes it once. Flushes go in the
  // order of the first marks: the request queued first (say, the release that lets
  // the next waiter in) leaves first.
  void mark_dirty(Flushable* f);
  // Forgets `f` (a connection being destroyed).
  void forget(Flushable* f);

  // Calls handler->on_timer(cookie) at the first iteration at or after `at_ns` (now_ns clock).
  void add_timer(std::int64_t at_ns, TimerHandler* handler, std::uint64_t cookie);
  // Drops every pending timer (end of a measurement).
  void clear_timers();

  // Step 4: called with the time right after each flush point's writes.
  void set_after_flush(std::function<void(std::int64_t)> hook) { after_flush_ = std::move(hook); }

  // How long step 1 may poll (epoll with no timeout, yielding the CPU between tries) before it
  // sleeps, adapting to how soon work has been coming back: the server's IdlePoll
  // (src/core/idle_poll.h). 0, the default, sleeps at once.
  void set_idle_poll_us(std::int64_t max_us) { idle_poll_ = IdlePoll(max_us); }
  // Time step 1 spent polling so far, µs.
  std::int64_t polled_us() const { return idle_poll_.polled_total(); }

  // The library shape (workload (m)): a connection's queued requests do not leave at the flush
  // point; it asks epoll for EPOLLOUT there and sends when the socket is reported writable,
  // then stops asking, as hiredis's event-library adapters and redis-benchmark do. Clients
  // that follow it (RespLockClient) call sent() after each such send; the after-flush hook is
  // not called then, since a flush point sends nothing.
  void set_library_shape(std::function<void(const void*, std::int64_t)> after_send) {
    after_send_ = std::move(after_send);
  }
  bool library_shape() const { return static_cast<bool>(after_send_); }
  // A library-shaped connection `sender` has just sent what it had queued.
  void sent(const void* sender);

  // Runs one iteration, waiting at most until `deadline_ns` for events.
  void run_once(std::int64_t deadline_ns);

 private:
  struct Timer {
    std::int64_t at_ns;
    std::uint64_t seq;  // FIFO among equal deadlines
    TimerHandler* handler;
    std::uint64_t cookie;
    bool operator>(const Timer& o) const {
      return at_ns != o.at_ns ? at_ns > o.at_ns : seq > o.seq;
    }
  };

  void flush_dirty();
  int wait(std::int64_t wait_ns);            // one epoll_pwait2; the number of events
  int poll_then_wait(std::int64_t wake_ns);  // step 1 with a poll window

  int epoll_fd_;
  std::vector<epoll_event> events_;
  std::vector<Flushable*> dirty_;
  std::vector<Flushable*> flushing_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::uint64_t timer_seq_ = 0;
  std::function<void(std::int64_t)> after_flush_;
  std::function<void(const void*, std::int64_t)> after_send_;  // the library shape
  IdlePoll idle_poll_{0};
};

}  // namespace holdfast::bench
