// A Store that keeps nothing: every change is "durable" at once. Used by tests of the layers
// above the store and by the PostgreSQL-less unit tests; never by `holdfast serve` on its own.
#pragma once

#include <atomic>

#include "store/store.h"

namespace holdfast {

class MemoryStore final : public Store {
 public:
  Result<DurableState> recover() override { return DurableState{}; }
  std::uint64_t append(const Change&) override {
    ++stats_.appended;
    return ++sequence_;
  }
  void submit() override {}
  std::uint64_t durable_sequence() const override { return sequence_; }
  void set_on_durable(std::function<void(std::uint64_t)>) override {}
  void set_state_source(StateSource) override {}
  StoreStats stats() const override { return stats_; }
  void close() override {}

 private:
  std::uint64_t sequence_ = 0;
  StoreStats stats_;
};

}  // namespace holdfast
