// The advisory-lock peer's client (bench/targets/postgres_target.h) against a real PostgreSQL:
// a blocking acquire waits in the server's queue until the holder unlocks, and gives up with
// kTimeout when its timeout (the session's lock_timeout) runs out.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "clock.h"
#include "event_loop.h"
#include "lock_client.h"
#include "target.h"
#include "targets/postgres_target.h"

namespace holdfast::bench {
namespace {

constexpr std::uint64_t kLock = 4242;

// The replies of one connection, one at a time.
class Replies final : public ReplyListener {
 public:
  void on_reply(const OpReply& r) override { last_ = r.status; }
  std::optional<OpStatus> take() { return std::exchange(last_, std::nullopt); }

 private:
  std::optional<OpStatus> last_;
};

class AdvisoryClient : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "holdfast-bench-pg-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    ::chmod(pattern.c_str(), 0755);  // the server runs as user 'postgres' when we are root
    dir_ = pattern;
    target_ = make_postgres_target(HOLDFAST_SCRIPTS_DIR);
    target_->start(dir_);
  }
  void TearDown() override {
    target_->stop();
    std::filesystem::remove_all(dir_);
  }

  // Runs the loop until `r` has a reply, for at most `ms`.
  std::optional<OpStatus> reply_within(Replies& r, int ms) {
    const std::int64_t until = now_ns() + std::int64_t{ms} * kNsPerMs;
    while (now_ns() < until) {
      loop_.run_once(std::min(until, now_ns() + 10 * kNsPerMs));
      if (auto got = r.take()) return got;
    }
    return std::nullopt;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Target> target_;
  EventLoop loop_;
};

TEST_F(AdvisoryClient, ABlockingAcquireWaitsForTheUnlockOrItsTimeout) {
  ASSERT_TRUE(target_->supports_blocking_acquire());
  auto holder = target_->connect(loop_);
  auto waiter = target_->connect(loop_);
  Replies held, waited;
  holder->set_listener(&held);
  waiter->set_listener(&waited);

  holder->acquire(kLock, 0, 10'000, 0);
  ASSERT_EQ(reply_within(held, 10'000), OpStatus::kGranted);
  waiter->try_acquire(kLock, 0, 0);
  EXPECT_EQ(reply_within(waited, 10'000), OpStatus::kBusy);
  // Held by the other session: the wait ends at its timeout.
  waiter->acquire(kLock, 0, 200, 0);
  EXPECT_EQ(reply_within(waited, 10'000), OpStatus::kTimeout);

  // A wait without a near timeout: granted once the holder unlocks, not before.
  waiter->acquire(kLock, 0, 60'000, 0);
  EXPECT_EQ(reply_within(waited, 300), std::nullopt);
  holder->release(kLock, "", 0);
  EXPECT_EQ(reply_within(held, 10'000), OpStatus::kReleased);
  EXPECT_EQ(reply_within(waited, 10'000), OpStatus::kGranted);
  waiter->release(kLock, "", 0);
  EXPECT_EQ(reply_within(waited, 10'000), OpStatus::kReleased);
  holder->release(kLock, "", 0);  // not its lock any more
  EXPECT_EQ(reply_within(held, 10'000), OpStatus::kNotHeld);
}

}  // namespace
}  // namespace holdfast::bench
