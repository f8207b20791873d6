// MutexChecker: proves (or disproves) mutual exclusion from the client's side.
//
// Every critical section is recorded as an interval per lock: it opens when the grant reply
// is received and closes when the release has been sent. Because the harness sends requests
// only at the event loop's flush point, a release queued in an iteration is closed with the
// time taken right after that iteration's writes, which is no earlier than the real send. Two
// grants of one lock that are both alive at once therefore always overlap here: if the server
// granted B before A's release reached it, B's grant reply is received in or after the
// iteration that received A's, and before A's release was sent (which is the end of that
// iteration at the earliest).
//
// After the run, intervals are sorted per lock and any interval that starts before the
// latest end seen for its lock is a violation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace holdfast::bench {

class MutexChecker {
 public:
  // Opens a critical section of `lock` at `granted_ns`; returns its index for close().
  std::size_t open(std::uint64_t lock, std::int64_t granted_ns);
  // Marks a section whose release was queued in this iteration; closed at the next
  // close_queued().
  void queue_close(std::size_t index) { queued_.push_back(index); }
  // The event loop's after-flush hook: the queued releases were sent by `sent_ns`.
  void close_queued(std::int64_t sent_ns);

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
  };
  std::vector<Interval> intervals_;
  std::vector<std::size_t> queued_;
};

}  // namespace holdfast::bench
