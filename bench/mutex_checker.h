// MutexChecker: proves (or disproves) mutual exclusion from the client's side.
//
// Every critical section is recorded as an interval per lock: it opens when the grant reply
// is received and closes when the release has been sent. Because the harness sends requests
// only at the event loop's flush point, a release queued in an iteration is closed with the
// time taken right after that iteration's writes, which is no earlier than the real send. The
// library-shaped client (event_loop.h, set_library_shape) sends a connection's requests only
// once epoll reports its socket writable, an iteration or more later: its releases are closed
// per connection, with the time right after that connection's own send. Two
// grants of one lock that are both alive at once therefore always overlap here: if the server
// granted B before A's release reached it, B's grant reply is received in or after the
// iteration that received A's, and before A's release was sent (which is the end of that
// iteration at the earliest).
//
// After the run, intervals are sorted per lock and any interval that starts while the weights
// of the sections still open on its lock, its own included, add up to more than the lock's
// capacity is a violation. Capacity and weight are 1 unless set: mutual exclusion. A shared
// lock is a capacity C with readers of weight 1 and writers of weight C; a semaphore of N
// permits is a capacity N with each section weighing the permits it takes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace holdfast::bench {

class MutexChecker {
 public:
  // Opens a critical section of `lock` at `granted_ns` that takes `weight` of the lock's
  // capacity; returns its index for queue_close().
  std::size_t open(std::uint64_t lock, std::int64_t granted_ns, std::uint32_t weight = 1);
  // How much weight `lock` holds at once (default 1). Before the lock's first open().
  void set_capacity(std::uint64_t lock, std::uint64_t capacity) { capacity_[lock] = capacity; }
  // Marks a section whose release was queued in this iteration on connection `sender`; closed
  // at the next close_queued(), or close_sent_by() of that sender.
  void queue_close(std::size_t index, const void* sender = nullptr) {
    queued_.push_back({index, sender});
  }
  // The event loop's after-flush hook: the queued releases were sent by `sent_ns`.
  void close_queued(std::int64_t sent_ns);
  // The library shape's after-send hook: `sender` sent what it had queued by `sent_ns`.
  void close_sent_by(const void* sender, std::int64_t sent_ns);

  struct Verdict {
    std::uint64_t sections = 0;
    std::uint64_t violations = 0;
    std::uint64_t unclosed = 0;   // granted but never released (a worker stopped mid-section)
    std::string first_violation;  // human-readable, for the report
  };
  Verdict verify() const;

 private:
  struct Interval {
    std::uint64_t lock;
    std::int64_t start_ns;
    std::int64_t end_ns;  // -1 while open
    std::uint32_t weight;
  };
  std::vector<Interval> intervals_;
  std::map<std::uint64_t, std::uint64_t> capacity_;
  struct Queued {
    std::size_t index;
    const void* sender;
  };
  std::vector<Queued> queued_;
};

}  // namespace holdfast::bench
