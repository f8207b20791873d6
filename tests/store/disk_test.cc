// WalStore on the real file system in a temporary directory, with fsync always: what the
// fakes model is what the kernel does.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::kStart;
using testing::make_hold;

class DiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/holdfast-wal-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    options_ = testing::fake_options();
    options_.data_dir = dir_ + "/data";
    options_.fsync = FsyncMode::kAlways;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<WalStore> make() {
    return std::make_unique<WalStore>(options_, clock_, posix_file_system());
  }

  std::string dir_;
  WalOptions options_;
  FakeClock clock_{kStart};
  testing::Model model_;
};

TEST_F(DiskTest, ChangesSurviveARestartFromTheDisk) {
  auto store = make();
  ASSERT_TRUE(store->recover().ok());
  store->set_state_source(state_source_of([this] { return model_.live(); }));
  std::uint64_t last = 0;
  for (std::uint64_t t = 1; t <= 2000; ++t) {
    const Change c = Granted{make_hold("k/" + std::to_string(t % 300), t)};
    model_.apply(c);
    last = store->append(c);
  }
  const Change rules = RuleSetPut{"locks", "x"};
  model_.apply(rules);
  last = store->append(rules);
  ASSERT_TRUE(testing::wait_durable(*store, last));
  EXPECT_GT(store->stats().syncs, 0u);
  EXPECT_LT(store->stats().syncs, 2001u);
  EXPECT_GT(store->stats().log_bytes, 0u);
  store->close();

  auto again = make();
  Result<DurableState> state = again->recover();
  ASSERT_TRUE(state.ok()) << state.error().message;
  testing::expect_same_state(*state, model_.after_restart(kStart));
}

TEST_F(DiskTest, SnapshotsAndCompactionOnTheDisk) {
  options_.snapshot_threshold_bytes = 64 * 1024;
  options_.segment_bytes = 16 * 1024;
  auto store = make();
  ASSERT_TRUE(store->recover().ok());
  store->set_state_source(state_source_of([this] { return model_.live(); }));
  std::uint64_t last = 0;
  for (std::uint64_t t = 1; t <= 5000; ++t) {
    const Change c = Granted{make_hold("k/" + std::to_string(t % 100), t)};
    model_.apply(c);
    last = store->append(c);
  }
  ASSERT_TRUE(testing::wait_durable(*store, last));
  store->close();
  EXPECT_GT(store->stats().snapshots, 0u);
  int snapshots = 0;
  for (const auto& entry : std::filesystem::directory_iterator(options_.data_dir))
    if (entry.path().extension() == ".snap") ++snapshots;
  EXPECT_EQ(snapshots, 1);

  auto again = make();
  Result<DurableState> state = again->recover();
  ASSERT_TRUE(state.ok()) << state.error().message;
  testing::expect_same_state(*state, model_.after_restart(kStart));
}

TEST_F(DiskTest, SecondStoreOnTheSameDirRefusesWithThePidOfTheFirst) {
  auto first = make();
  ASSERT_TRUE(first->recover().ok());
  auto second = make();
  Result<DurableState> state = second->recover();
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().message, "data dir " + options_.data_dir +
                                       " is in use by another holdfast server (pid " +
                                       std::to_string(::getpid()) + ")");
  first->close();
  auto third = make();
  EXPECT_TRUE(third->recover().ok());
}

TEST_F(DiskTest, TornTailOnDiskIsTruncated) {
  auto store = make();
  ASSERT_TRUE(store->recover().ok());
  ASSERT_TRUE(testing::wait_durable(*store, store->append(Granted{make_hold("a", 1)})));
  store->close();
  const std::string segment = options_.data_dir + "/wal-00000000000000000001.log";
  const auto intact = std::filesystem::file_size(segment);
  {
    FILE* f = std::fopen(segment.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    std::fwrite("\x12\x34\x56", 1, 3, f);  // a frame header cut short
    std::fclose(f);
  }
  auto again = make();
  Result<DurableState> state = again->recover();
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->holds.size(), 1u);
  EXPECT_EQ(std::filesystem::file_size(segment), intact);
}

}  // namespace
}  // namespace holdfast::wal
