// LatencyHistogram: an HDR-style log-linear histogram of nanosecond values.
//
// A value v is placed by its power of two (the "exponent") and, inside that power, by the next
// kSubBits bits below its leading one. Every bucket therefore spans at most 2^-kSubBits of its
// own value (under 0.8 % with 7 bits), at any magnitude from 1 ns to hours, in a fixed array of
// a few thousand counters: recording is a count-leading-zeros and an increment, with no
// allocation, so the load generator can record every operation.
#pragma once

#include <array>
#include <cstdint>

namespace holdfast::bench {

class LatencyHistogram {
 public:
  void record(std::int64_t value_ns);
  void merge(const LatencyHistogram& other);
  void reset();

  std::uint64_t count() const { return count_; }
  std::int64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }

  // The value below which `percent` of the recorded values fall, reported as the highest value
  // of its bucket (never above the largest recorded value). 0 when nothing was recorded.
  std::int64_t percentile(double percent) const;

 private:
  static constexpr int kSubBits = 7;
  static constexpr std::uint64_t kSubCount = 1u << kSubBits;
  // Values below 2*kSubCount index directly; above, kSubCount buckets per power of two. The
  // largest index is (63 - kSubBits) * kSubCount + 2 * kSubCount - 1.
  static constexpr std::size_t kBuckets = (65 - kSubBits) * kSubCount;

  static std::size_t index_of(std::uint64_t v);
  static std::uint64_t highest_in(std::size_t index);

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::int64_t max_ = 0;
  std::int64_t sum_ = 0;
};

}  // namespace holdfast::bench
