// The server's state source: what the embedded backend hands the store for a snapshot, and
// that a restart from such snapshots gives back every lease hold, the rule set, and tokens that
// continue above every token handed out (session holds included, though they do not survive).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/principal.h"
#include "service_fixture.h"
#include "store/wal/fake_file_system.h"
#include "store/wal/snapshot.h"
#include "store/wal/wal_store.h"

namespace holdfast::testing {
namespace {

const char* kRules = R"toml([ruleSet]
name = "lock-policy"
resourceType = "lock"

[rules.lock]
acquire = "true"
)toml";

// Run with the snapshot encoded on the loop thread and in a forked child (the server's way).
class EmbeddedSnapshot : public ::testing::TestWithParam<bool> {
 protected:
  struct Node {
    std::unique_ptr<wal::WalStore> store;
    std::unique_ptr<EmbeddedNode> service;
  };

  Node start() {
    wal::WalOptions options;
    options.data_dir = "/data";
    options.fsync = wal::FsyncMode::kAlways;
    options.preallocate_segments = false;
    options.snapshot_threshold_bytes = 1;  // a snapshot at every change
    options.encode_snapshots_in_child = GetParam();
    Node node;
    node.store = std::make_unique<wal::WalStore>(options, clock, fs);
    node.service = std::make_unique<EmbeddedNode>(clock, *node.store);
    const Status recovered = node.service->recover();
    EXPECT_TRUE(recovered.ok()) << recovered.error().message;
    return node;
  }

  HoldState take(Node& node, std::string_view key, bool session_scoped = false) {
    AcquireArgs args;
    args.key = key;
    args.ttl_ms = 60'000;
    args.session_scoped = session_scoped;
    Result<Answer> out = node.service->answer(
        [&](LockService& s, Completion& done) { return s.try_acquire(caller, args, done); });
    EXPECT_TRUE(out.ok() && std::holds_alternative<HoldState>(*out)) << key;
    return out.ok() ? std::get<HoldState>(*out) : HoldState{};
  }

  StatusView status(Node& node, std::string_view key) {
    Result<Answer> out = node.service->answer(
        [&](LockService& s, Completion& done) { return s.status(caller, key, done); });
    EXPECT_TRUE(out.ok());
    return out.ok() ? std::get<StatusView>(*out) : StatusView{};
  }

  // Each change asks for a snapshot (threshold 1) unless one is still being written: wait
  // until the store has written the n-th, so the next change asks for the next.
  static void wait_for_snapshots(Node& node, std::uint64_t n) {
    node.store->submit();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (node.store->stats().snapshots < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    ASSERT_EQ(node.store->stats().snapshots, n);
  }

  FakeClock clock;
  wal::FakeFileSystem fs;
  Principal owner = Principal::local_owner();
  Caller caller{&owner, 7};
};

TEST_P(EmbeddedSnapshot, RestartFromSnapshotsKeepsLeaseHoldsRulesAndTokenOrder) {
  std::vector<HoldState> leases;
  std::uint64_t session_token = 0;
  {
    Node node = start();
    std::uint64_t snapshots = 0;
    ASSERT_TRUE(node.service
                    ->answer([&](LockService& s, Completion& done) {
                      return s.set_rule_set(caller, kRules, done);
                    })
                    .ok());
    wait_for_snapshots(node, ++snapshots);
    for (int i = 0; i < 20; ++i) {
      leases.push_back(take(node, "job/" + std::to_string(i)));
      wait_for_snapshots(node, ++snapshots);
    }
    session_token = take(node, "session-only", /*session_scoped=*/true).token;
    wait_for_snapshots(node, ++snapshots);
    node.store->close();
    // Compaction deleted the log under the newest snapshot, which was cut after every change
    // above: what the restart finds comes from what the service handed the store.
    EXPECT_EQ(node.store->stats().log_bytes, 8u) << "only the new segment's magic is left";
  }

  Node node = start();
  for (const HoldState& hold : leases) {
    StatusView status = this->status(node, hold.key);
    ASSERT_TRUE(status.held) << hold.key;
    EXPECT_EQ(status.hold.token, hold.token) << hold.key;
    EXPECT_EQ(status.hold.lease_expires_at, hold.lease_expires_at) << hold.key;
  }
  EXPECT_FALSE(status(node, "session-only").held) << "a session hold survived a restart";
  Result<Answer> rules = node.service->answer(
      [&](LockService& s, Completion& done) { return s.get_rule_set(caller, done); });
  ASSERT_TRUE(rules.ok());
  const auto& set = std::get<std::optional<RuleSetPut>>(*rules);
  ASSERT_TRUE(set);
  EXPECT_EQ(set->name, "lock-policy");
  EXPECT_GT(take(node, "next").token, session_token) << "a token was handed out twice";
  node.store->close();
}

// A store that keeps nothing but the state source, to call it as the encoder child does.
class SourceOnlyStore final : public Store {
 public:
  Result<DurableState> recover() override { return DurableState{}; }
  std::uint64_t append(const Change&) override { return ++sequence_; }
  void submit() override {}
  std::uint64_t durable_sequence() const override { return sequence_; }
  void set_on_durable(std::function<void(std::uint64_t)>) override {}
  void set_state_source(StateSource s) override { source = std::move(s); }
  StoreStats stats() const override { return {}; }
  void close() override {}
  StateSource source;

 private:
  std::uint64_t sequence_ = 0;
};

// The encoder child reads the state twice (to count, then to encode) and both reads must
// agree, so a lease that ends between them must not change what is handed over.
TEST(EmbeddedStateSource, HandsOverTheSameStateWhateverTheClockSays) {
  FakeClock clock;
  SourceOnlyStore store;
  EmbeddedNode service(clock, store);
  ASSERT_TRUE(service.recover().ok());
  Principal owner = Principal::local_owner();
  const Caller caller{&owner, 7};
  for (const auto& [key, ttl] : {std::pair{"short", 100}, {"long", 60'000}}) {
    AcquireArgs args;
    args.key = key;
    args.ttl_ms = ttl;
    ASSERT_TRUE(service
                    .answer([&](LockService& s, Completion& done) {
                      return s.try_acquire(caller, args, done);
                    })
                    .ok());
  }
  ASSERT_TRUE(store.source);
  wal::SnapshotEncoder first;
  store.source(first);
  clock.advance(1'000);  // "short" has ended; nothing has swept it yet
  wal::SnapshotEncoder second;
  store.source(second);
  const wal::EncodedState a = first.take();
  const wal::EncodedState b = second.take();
  EXPECT_EQ(a.hold_count, 2u);
  EXPECT_EQ(b.hold_count, a.hold_count);
  EXPECT_EQ(b.holds, a.holds);
}

INSTANTIATE_TEST_SUITE_P(Encoders, EmbeddedSnapshot, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "InAChild" : "OnTheLoop";
                         });

}  // namespace
}  // namespace holdfast::testing
