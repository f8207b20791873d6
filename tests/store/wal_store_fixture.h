// A WalStore on the in-memory file system with a fake clock, plus a reference Model of what
// the lock table would hold, for the WalStore tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "test_support.h"

namespace holdfast::wal::testing {

// A lock table's change sink that sends every change to `store` as the server does (append,
// then submit), keeping the last sequence number to wait for.
struct ForwardToStore : ChangeSink {
  explicit ForwardToStore(WalStore& s) : store(&s) {}
  void on_change(const Change& c) override {
    last = store->append(c);
    store->submit();
  }
  WalStore* store;
  std::uint64_t last = 0;
};

class WalStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<WalStore> make(FileSystem* fs = nullptr) {
    return std::make_unique<WalStore>(options_, clock_, fs != nullptr ? *fs : fs_);
  }

  // A store that recovered successfully; its state in recovered_.
  std::unique_ptr<WalStore> open(FileSystem* fs = nullptr) {
    auto store = make(fs);
    Result<DurableState> state = store->recover();
    EXPECT_TRUE(state.ok()) << state.error().message;
    if (state) recovered_ = std::move(state).value();
    return store;
  }

  // What a new process finds in the data dir (the store is closed again at once).
  Result<DurableState> restart(FileSystem* fs = nullptr) {
    auto store = make(fs);
    Result<DurableState> state = store->recover();
    store->close();
    return state;
  }

  // Applies each change to the model (as the lock table would, first) and appends it.
  std::uint64_t append(WalStore& store, const Change& change) {
    model_.apply(change);
    const std::uint64_t sequence = store.append(change);
    store.submit();  // as the loop would after each piece of work
    return sequence;
  }

  std::uint64_t append_all(WalStore& store, const std::vector<Change>& changes) {
    std::uint64_t last = 0;
    for (const Change& c : changes) last = append(store, c);
    EXPECT_TRUE(wait_durable(store, last));
    return last;
  }

  void expect_restart_sees_model(FileSystem* fs = nullptr) {
    Result<DurableState> state = restart(fs);
    ASSERT_TRUE(state.ok()) << state.error().message;
    expect_same_state(*state, model_.after_restart(clock_.now_ms()));
  }

  FakeFileSystem fs_;
  FakeClock clock_{kStart};
  WalOptions options_ = fake_options();
  Model model_;
  DurableState recovered_;
};

}  // namespace holdfast::wal::testing
