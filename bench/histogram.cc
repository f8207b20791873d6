// LatencyHistogram: see histogram.h for the bucket layout.
#include "histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace holdfast::bench {

std::size_t LatencyHistogram::index_of(std::uint64_t v) {
  if (v < 2 * kSubCount) return static_cast<std::size_t>(v);
  // exponent >= kSubBits + 1; keep kSubBits bits below the leading one (the mantissa keeps
  // the leading one too, so it lies in [kSubCount, 2*kSubCount)).
  const int exponent = 63 - std::countl_zero(v);
  const int shift = exponent - kSubBits;
  const std::uint64_t mantissa = v >> shift;
  return static_cast<std::size_t>(shift) * kSubCount + static_cast<std::size_t>(mantissa);
}

std::uint64_t LatencyHistogram::highest_in(std::size_t index) {
  if (index < 2 * kSubCount) return index;
  const std::size_t shift = index / kSubCount - 1;
  const std::uint64_t mantissa = index - shift * kSubCount;
  return ((mantissa + 1) << shift) - 1;
}

void LatencyHistogram::record(std::int64_t value_ns) {
  const std::uint64_t v = value_ns < 0 ? 0 : static_cast<std::uint64_t>(value_ns);
  ++counts_[std::min(index_of(v), kBuckets - 1)];
  ++count_;
  sum_ += static_cast<std::int64_t>(v);
  max_ = std::max<std::int64_t>(max_, static_cast<std::int64_t>(v));
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::reset() { *this = LatencyHistogram(); }

std::int64_t LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) return 0;
  // The rank of the wanted value, 1-based: p99 of 1000 values is the 990th smallest.
  const double exact = std::ceil(percent / 100.0 * static_cast<double>(count_));
  const std::uint64_t rank =
      std::clamp<std::uint64_t>(static_cast<std::uint64_t>(exact), 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min<std::int64_t>(static_cast<std::int64_t>(highest_in(i)), max_);
  }
  return max_;
}

}  // namespace holdfast::bench
