// append() allocates nothing in steady state: the record is encoded into a batch buffer that
// is swapped with the syncer's, and both keep their capacity. Counted by replacing the global
// operator new for this test binary (counting only on the thread that asks for it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "wal_store_fixture.h"

// The replacement pairs malloc with free by design; GCC cannot see that new and delete are both
// replaced here.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local bool counting = false;
thread_local std::uint64_t allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace holdfast::wal {
namespace {

using testing::make_hold;
using testing::WalStoreTest;

using AllocationTest = WalStoreTest;

TEST_F(AllocationTest, AppendAllocatesNothingInSteadyState) {
  auto store = open();
  std::vector<Change> changes;
  for (std::uint64_t t = 1; t <= 1000; ++t)
    changes.push_back(Granted{make_hold("orders/" + std::to_string(t) + "/with/a/long/key", t)});

  // Warm up: a few rounds in which a whole burst piles up behind a blocked sync, so both batch
  // buffers grow to the size of a burst.
  std::uint64_t last = 0;
  const auto burst_behind_blocked_sync = [&](std::size_t n) {
    fs_.block_syncs();
    last = store->append(changes[0]);
    store->submit();
    EXPECT_TRUE(fs_.wait_for_blocked_syncs(1, std::chrono::seconds(10)));
    counting = true;
    for (std::size_t i = 0; i < n; ++i) last = store->append(changes[i]);
    counting = false;
    fs_.unblock_syncs();
    EXPECT_TRUE(testing::wait_durable(*store, last));
  };
  for (int round = 0; round < 4; ++round) burst_behind_blocked_sync(changes.size());

  allocations = 0;
  burst_behind_blocked_sync(changes.size() / 2);
  EXPECT_EQ(allocations, 0u);
  store->close();
}

}  // namespace
}  // namespace holdfast::wal
