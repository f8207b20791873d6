#include "store/wal/commit_wait.h"

#include <gtest/gtest.h>

namespace holdfast::wal {
namespace {

using std::chrono::microseconds;

LoopCommit commit(std::uint64_t changes, std::uint64_t arrived, microseconds took) {
  return LoopCommit{changes, arrived, took};
}

TEST(CommitWait, ALoneClientNeverWaits) {
  EXPECT_EQ(commit_wait_for(commit(1, 0, microseconds(150)), 1, microseconds(0)), microseconds(0));
}

TEST(CommitWait, WaitsForTheLastCommitsClientsAndThoseThatCameDuringIt) {
  // 8 answered by the last commit, 8 more read right after it: the next commit waits for 16.
  const LoopCommit last = commit(8, 8, microseconds(140));
  EXPECT_EQ(commit_wait_for(last, 8, microseconds(10)), microseconds(60));
  EXPECT_EQ(commit_wait_for(last, 15, microseconds(30)), microseconds(40));
  EXPECT_EQ(commit_wait_for(last, 16, microseconds(30)), microseconds(0));
}

TEST(CommitWait, NeverLongerThanHalfTheLastCommitNorTheCap) {
  EXPECT_EQ(commit_wait_for(commit(4, 0, microseconds(140)), 2, microseconds(70)), microseconds(0));
  EXPECT_EQ(commit_wait_for(commit(4, 0, microseconds(5000)), 2, microseconds(0)), kMaxCommitWait);
}

TEST(CommitWait, NothingToCommitIsNoWait) {
  EXPECT_EQ(commit_wait_for(commit(8, 0, microseconds(140)), 0, microseconds(0)), microseconds(0));
}

}  // namespace
}  // namespace holdfast::wal
