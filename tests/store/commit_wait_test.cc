#include "store/wal/commit_wait.h"

#include <gtest/gtest.h>

namespace holdfast::wal {
namespace {

using std::chrono::microseconds;

constexpr std::uint64_t kManyClients = 1000;

LoopCommit commit(std::uint64_t changes, std::uint64_t arrived, microseconds took) {
  return LoopCommit{changes, arrived, took};
}

TEST(CommitWait, ALoneClientNeverWaits) {
  EXPECT_EQ(commit_wait_for(commit(1, 0, microseconds(150)), 1, kManyClients, microseconds(0)),
            microseconds(0));
}

TEST(CommitWait, WaitsForTheLastCommitsClientsAndThoseReadRightAfterIt) {
  // 8 answered by the last commit, 8 more read right after it: the next commit waits for 16,
  // counted from when the last one's replies were out.
  const LoopCommit last = commit(8, 8, microseconds(140));
  EXPECT_EQ(commit_wait_for(last, 8, kManyClients, microseconds(10)), microseconds(60));
  EXPECT_EQ(commit_wait_for(last, 15, kManyClients, microseconds(30)), microseconds(40));
  EXPECT_EQ(commit_wait_for(last, 16, kManyClients, microseconds(30)), microseconds(0));
}

TEST(CommitWait, NeverForMoreClientsThanAreConnected) {
  // 64 answered, and 60 read in the round after the replies went out: most of them are the
  // same clients back already, as only 64 are connected. The wait is for the last 4.
  const LoopCommit last = commit(64, 60, microseconds(140));
  EXPECT_EQ(commit_wait_for(last, 60, 64, microseconds(10)), microseconds(60));
  EXPECT_EQ(commit_wait_for(last, 64, 64, microseconds(10)), microseconds(0));
  EXPECT_EQ(commit_wait_for(last, 64, kManyClients, microseconds(10)), microseconds(60));
}

TEST(CommitWait, NeverLongerThanHalfTheLastCommitNorTheCap) {
  EXPECT_EQ(commit_wait_for(commit(4, 0, microseconds(140)), 2, kManyClients, microseconds(70)),
            microseconds(0));
  EXPECT_EQ(commit_wait_for(commit(4, 0, microseconds(5000)), 2, kManyClients, microseconds(0)),
            kMaxCommitWait);
}

TEST(CommitWait, NothingToCommitIsNoWait) {
  EXPECT_EQ(commit_wait_for(commit(8, 0, microseconds(140)), 0, kManyClients, microseconds(0)),
            microseconds(0));
}

}  // namespace
}  // namespace holdfast::wal
