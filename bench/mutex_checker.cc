// MutexChecker: see mutex_checker.h for why client-side intervals are enough.
#include "mutex_checker.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace holdfast::bench {

std::size_t MutexChecker::open(std::uint64_t lock, std::int64_t granted_ns, std::uint32_t weight) {
  intervals_.push_back({lock, granted_ns, -1, weight});
  return intervals_.size() - 1;
}

void MutexChecker::close_queued(std::int64_t sent_ns) {
  for (const Queued& q : queued_) intervals_[q.index].end_ns = sent_ns;
  queued_.clear();
}

void MutexChecker::close_sent_by(const void* sender, std::int64_t sent_ns) {
  std::erase_if(queued_, [&](const Queued& q) {
    if (q.sender != sender) return false;
    intervals_[q.index].end_ns = sent_ns;
    return true;
  });
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
  // The sections open on the current lock, soonest end first, and the weight they hold. A
  // section that ends exactly when another starts does not overlap it.
  using Open = std::pair<std::int64_t, std::uint32_t>;
  std::priority_queue<Open, std::vector<Open>, std::greater<>> open;
  std::uint64_t held = 0, capacity = 1;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const Interval& s = sorted[i];
    if (i == 0 || s.lock != sorted[i - 1].lock) {
      open = {};
      held = 0;
      const auto c = capacity_.find(s.lock);
      capacity = c == capacity_.end() ? 1 : c->second;
    }
    while (!open.empty() && open.top().first <= s.start_ns) {
      held -= open.top().second;
      open.pop();
    }
    if (held + s.weight > capacity && v.violations++ == 0) {
      v.first_violation = "lock " + std::to_string(s.lock) + ": granted at +" +
                          std::to_string(s.start_ns - sorted[0].start_ns) + " ns with weight " +
                          std::to_string(s.weight) + " while sections held " +
                          std::to_string(held) + " of " + std::to_string(capacity);
      if (!open.empty())
        v.first_violation += " until +" + std::to_string(open.top().first - sorted[0].start_ns) +
                             " ns at the soonest";
    }
    held += s.weight;
    open.emplace(s.end_ns, s.weight);
  }
  return v;
}

}  // namespace holdfast::bench
