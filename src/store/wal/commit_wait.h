// How long the loop waits for more changes before it commits a batch itself (fsync always,
// commit_on_loop; WalStore::commit_wait).
//
// With clients that send their next request only once the last is answered, a commit on the
// loop answers its clients all at once, and they come back over the next tens of
// microseconds. Meanwhile other clients' requests, which arrived while the disk synced, are
// read at once. Committing those alone starts a second group that alternates with the first,
// each waiting for the other's sync: at 16 connections about half of them per sync. So the
// loop waits until every client of its last commit is back as well, but never longer than
// half that commit's write and sync (and kMaxCommitWait): a client that does not come back
// costs at most that. A lone client (a commit of one change) never waits.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace holdfast::wal {

inline constexpr std::chrono::microseconds kMaxCommitWait{200};

struct LoopCommit {
  std::uint64_t changes = 0;         // in the loop's last commit (0: none since the syncer's)
  std::uint64_t arrived_during = 0;  // read first after it: they arrived while it synced
  std::chrono::steady_clock::duration took{};  // its write and sync
};

// `waiting`: changes not yet durable; `since`: time since the last commit ended.
inline std::chrono::microseconds commit_wait_for(const LoopCommit& last, std::uint64_t waiting,
                                                 std::chrono::steady_clock::duration since) {
  if (last.changes < 2 || waiting == 0 || waiting >= last.changes + last.arrived_during) return {};
  const std::chrono::steady_clock::duration window =
      std::min<std::chrono::steady_clock::duration>(last.took / 2, kMaxCommitWait);
  if (since >= window) return {};
  return std::chrono::ceil<std::chrono::microseconds>(window - since);
}

}  // namespace holdfast::wal
