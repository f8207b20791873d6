// A log that cannot be written or synced (a full disk, EIO): the store reports a fault once,
// keeps every change it was given, publishes nothing more, cuts the failed write off the log
// and writes the changes again when asked (or on its schedule), and then a restart finds
// exactly what was published: no torn record in the middle, nothing acknowledged lost, even
// though a failed fdatasync may have dropped the pages it was to write.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "store/wal/data_dir.h"
#include "wal_store_fixture.h"

namespace holdfast::wal {
namespace {

using testing::grant;
using testing::kDir;
using testing::make_hold;
using testing::Model;
using testing::WalStoreTest;

class FaultTest : public WalStoreTest {
 protected:
  void SetUp() override {
    options_.retry_interval_ms = 3'600'000;  // retries only when a test asks (retry_now)
    options_.on_fault = [this](const std::optional<Error>& fault) {
      std::lock_guard lock(mu_);
      events_.push_back(fault ? fault->message : "writable");
    };
  }

  std::vector<std::string> events() {
    std::lock_guard lock(mu_);
    return events_;
  }

  // Appends a change the caller will have acknowledged once it is durable.
  std::uint64_t acknowledge(WalStore& store, const Change& change) {
    acknowledged_.apply(change);
    const std::uint64_t sequence = append(store, change);
    EXPECT_TRUE(testing::wait_durable(store, sequence));
    return sequence;
  }

  bool faulted(const WalStore& store) { return store.fault().has_value(); }

  void expect_restart_sees(const Model& model, FileSystem* fs) {
    Result<DurableState> state = restart(fs);
    ASSERT_TRUE(state.ok()) << state.error().message;
    testing::expect_same_state(*state, model.after_restart(clock_.now_ms()));
  }

  std::size_t segments() {
    Result<DirListing> listing = list_data_dir(fs_, kDir);
    EXPECT_TRUE(listing.ok());
    return listing.ok() ? listing->segments.size() : 0;
  }

  Model acknowledged_;  // what was durable when a reply could have been sent
  std::mutex mu_;
  std::vector<std::string> events_;
};

TEST_F(FaultTest, FailedSyncRefusesUntilARetryRewritesTheBatch) {
  auto store = open();
  const std::uint64_t ok = acknowledge(*store, grant(1));

  fs_.fail_syncs(true);
  const std::uint64_t unsynced = append(*store, grant(2));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  const std::optional<Error> fault = store->fault();
  EXPECT_EQ(fault->code, ErrorCode::kStoreUnavailable);
  EXPECT_NE(fault->message.find("injected sync error"), std::string::npos) << fault->message;
  EXPECT_EQ(store->durable_sequence(), ok);
  EXPECT_EQ(store->stats().faults, 1u);
  ASSERT_TRUE(store->stats().fault.has_value());

  // A change made during the fault (a lease ending) waits with the failed batch; failed
  // retries report nothing new.
  const std::uint64_t during = append(*store, Released{"k/1", 1});
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t syncs = fs_.file_syncs();
    store->retry_now();
    ASSERT_TRUE(testing::eventually([&] { return fs_.file_syncs() > syncs; }));
  }
  EXPECT_TRUE(faulted(*store));
  EXPECT_EQ(store->durable_sequence(), ok);
  EXPECT_EQ(events().size(), 1u);
  EXPECT_LE(segments(), 2u);  // failed retries rewrite one new segment, not one each
  // A power loss now keeps what was acknowledged, and nothing else.
  expect_restart_sees(acknowledged_, fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());

  fs_.fail_syncs(false);
  store->retry_now();
  ASSERT_TRUE(testing::eventually([&] { return !faulted(*store); }));
  EXPECT_GE(store->durable_sequence(), during);
  EXPECT_GT(during, unsynced);
  EXPECT_EQ(events(), (std::vector<std::string>{fault->message, "writable"}));

  acknowledge(*store, grant(3));
  // The failed sync's pages are gone for good (the fake plays Linux after a failed
  // fdatasync): only a rewrite in a new file makes grant 2 survive a power loss.
  expect_restart_sees(model_, fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());
  store->close();
  expect_restart_sees_model();
}

TEST_F(FaultTest, TornWriteIsCutOffAndNeverLeftInTheMiddleOfTheLog) {
  auto store = open();
  acknowledge(*store, grant(1));

  fs_.fail_writes(true, /*torn=*/true);  // a full disk: half of the frame reaches the file
  append(*store, grant(2));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  // kill -9 now: recovery cuts the torn tail of the newest segment.
  expect_restart_sees(acknowledged_, fs_.image_after(FakeFileSystem::Crash::kKill).get());

  fs_.fail_writes(false);
  store->retry_now();
  ASSERT_TRUE(testing::eventually([&] { return !faulted(*store); }));
  acknowledge(*store, grant(3));
  // The torn half is gone: a kill -9 or a clean stop both replay every grant.
  expect_restart_sees(model_, fs_.image_after(FakeFileSystem::Crash::kKill).get());
  store->close();
  expect_restart_sees_model();
}

TEST_F(FaultTest, RetriesOnItsOwnSchedule) {
  options_.retry_interval_ms = 5;
  auto store = open();
  acknowledge(*store, grant(1));
  fs_.fail_writes(true);
  const std::uint64_t waiting = append(*store, grant(2));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  fs_.fail_writes(false);
  // No retry_now(): the schedule retries by itself.
  ASSERT_TRUE(testing::eventually([&] { return store->durable_sequence() >= waiting; }));
  EXPECT_FALSE(faulted(*store));
  store->close();
  expect_restart_sees_model();
}

TEST_F(FaultTest, CloseDuringAFaultKeepsWhatWasAcknowledged) {
  auto store = open();
  acknowledge(*store, grant(1));
  fs_.fail_syncs(true);
  append(*store, grant(2));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  store->close();  // one last try fails too
  fs_.fail_syncs(false);
  expect_restart_sees(acknowledged_, fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());
}

TEST_F(FaultTest, CloseAfterTheDiskCameBackWritesTheKeptChanges) {
  auto store = open();
  acknowledge(*store, grant(1));
  fs_.fail_writes(true);
  append(*store, grant(2));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  fs_.fail_writes(false);
  store->close();  // its last try succeeds
  expect_restart_sees(model_, fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());
}

TEST_F(FaultTest, ASnapshotDueDuringAFaultIsLeftForLater) {
  options_.snapshot_threshold_bytes = 512;
  options_.segment_bytes = 1024;
  auto store = open();
  store->set_state_source(state_source_of([this] { return model_.live(); }));
  std::uint64_t token = 0;
  acknowledge(*store, grant(++token));
  fs_.fail_syncs(true);
  append(*store, grant(++token));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  for (int i = 0; i < 40; ++i) append(*store, grant(++token));  // asks for a snapshot
  store->retry_now();
  ASSERT_TRUE(testing::eventually([&] { return store->stats().snapshots_skipped > 0; }));
  fs_.fail_syncs(false);
  store->retry_now();
  ASSERT_TRUE(testing::eventually([&] { return !faulted(*store); }));
  for (int i = 0; i < 40; ++i) acknowledge(*store, grant(++token));
  ASSERT_TRUE(testing::eventually([&] {
    const StoreStats s = store->stats();
    return s.snapshots > 0 && !s.snapshot_in_progress;
  }));
  expect_restart_sees(model_, fs_.image_after(FakeFileSystem::Crash::kPowerLoss).get());
  store->close();
  expect_restart_sees_model();
}

TEST_F(FaultTest, FsyncNeverRefusesAndRecoversToo) {
  options_.fsync = FsyncMode::kNever;
  options_.retry_interval_ms = 5;
  auto store = open();
  fs_.fail_writes(true, /*torn=*/true);
  append(*store, grant(1));
  ASSERT_TRUE(testing::eventually([&] { return faulted(*store); }));
  fs_.fail_writes(false);
  ASSERT_TRUE(testing::eventually([&] { return !faulted(*store); }));
  append(*store, grant(2));
  store->close();
  expect_restart_sees(model_, fs_.image_after(FakeFileSystem::Crash::kKill).get());
}

}  // namespace
}  // namespace holdfast::wal
