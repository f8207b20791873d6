// IdlePoll: how long a thread that serves a chain of work (the event loop, the log writer, the
// load generator's loop) keeps polling for the next piece before it goes to sleep.
//
// A loop that sleeps in epoll_wait as soon as it runs out of work pays for a wake-up whenever
// the next command arrives: a context switch and, on a virtual machine whose idle CPU halts,
// an exit to the host and an inter-processor interrupt. On the 2-core VM Holdfast is measured
// on that is 20-60 µs, several times the work of a command, and a chain of wake-ups (a hot
// key handed from one waiter to the next, a client that sends its next command as soon as the
// last one is answered) is made of little else. Polling for a short while instead of sleeping
// takes those wake-ups out of the chain, at the price of the CPU spent polling.
//
// The window adapts the way Linux's guest halt-polling governor does:
//  1. It starts at 0: the loop sleeps at once.
//  2. When the loop slept and the next work came within `max`, polling would have caught it:
//     the window grows (to max/4, then doubling, up to `max`).
//  3. When the loop slept and waited longer than `max`, polling would have been wasted: the
//     window halves (and drops to 0 below max/4).
//  4. Work found while polling leaves the window as it is.
// So a server whose clients come back within `max` polls (one busy core, lower latency), and
// one whose work arrives further apart than that sleeps as before: from a full window, three
// long sleeps in a row (after polls of max, max/2 and max/4) turn polling off.
//
// Pure: the caller passes the time. Not thread-safe (the thread that polls owns it).
#pragma once

#include <cstdint>
#include <optional>

namespace holdfast {

class IdlePoll {
 public:
  using Micros = std::int64_t;

  // REQUIRES: max_us >= 0. 0 turns polling off: keep_polling() is always false.
  explicit IdlePoll(Micros max_us);

  // The monotonic clock in microseconds: the time the server's threads pass to a window.
  static Micros steady_now();

  // The loop found nothing to do at `now`. True: poll again; false: sleep until work comes.
  bool keep_polling(Micros now);
  // True between the first keep_polling() of an idle spell and the work that ends it.
  bool idle() const { return idle_since_.has_value(); }
  // The loop found work at `now` after polling (counted as polled time); nothing if not idle().
  void found_work(Micros now);
  // The loop slept (after keep_polling() said false) and woke with work at `now`.
  void woke(Micros now);

  Micros window() const { return window_; }
  Micros max() const { return max_; }
  // Time spent polling so far, found work or not: the CPU polling cost.
  Micros polled_total() const { return polled_total_; }

 private:
  Micros max_;
  Micros grow_start_;
  Micros window_ = 0;
  std::optional<Micros> idle_since_;
  Micros polled_total_ = 0;
};

}  // namespace holdfast
