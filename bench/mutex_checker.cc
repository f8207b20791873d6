// MutexChecker: see mutex_checker.h for why client-side intervals are enough.
#include "mutex_checker.h"

#include <algorithm>

namespace holdfast::bench {

std::size_t MutexChecker::open(std::uint64_t lock, std::int64_t granted_ns) {
  intervals_.push_back({lock, granted_ns, -1});
  return intervals_.size() - 1;
}

void MutexChecker::close_queued(std::int64_t sent_ns) {
  for (std::size_t i : queued_) intervals_[i].end_ns = sent_ns;
  queued_.clear();
}

MutexChecker::Verdict MutexChecker::verify() const {
  Verdict v;
  std::vector<Interval> sorted;
  sorted.reserve(intervals_.size());
  for (const Interval& i : intervals_) {
    if (i.end_ns < 0) {
      ++v.unclosed;
      continue;
    }
    sorted.push_back(i);
  }
  v.sections = sorted.size();
  std::sort(sorted.begin(), sorted.end(), [](const Interval& a, const Interval& b) {
    return a.lock != b.lock ? a.lock < b.lock : a.start_ns < b.start_ns;
  });
  std::int64_t latest_end = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i == 0 || sorted[i].lock != sorted[i - 1].lock) {
      latest_end = sorted[i].end_ns;
      continue;
    }
    if (sorted[i].start_ns < latest_end) {
      if (v.violations++ == 0) {
        v.first_violation = "lock " + std::to_string(sorted[i].lock) + ": granted at +" +
                            std::to_string(sorted[i].start_ns - sorted[0].start_ns) +
                            " ns while a section held it until +" +
                            std::to_string(latest_end - sorted[0].start_ns) + " ns";
      }
    }
    latest_end = std::max(latest_end, sorted[i].end_ns);
  }
  return v;
}

}  // namespace holdfast::bench
