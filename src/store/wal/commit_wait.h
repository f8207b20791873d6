// How long the loop waits for more changes before it commits a batch itself (fsync always,
// commit_on_loop; WalStore::commit_wait).
//
// With clients that send their next request only once the last is answered, a commit on the
// loop answers its clients all at once, and they come back one by one over the next tens of
// microseconds, as the client reads its replies. Meanwhile other clients' requests, which
// arrived while the disk synced, are read at once. Committing before the stragglers are back
// leaves them for the commit after, a whole write and sync later; and the clients split into
// groups that alternate, each waiting for the others' syncs. So the loop waits until as many
// changes are pending as its last commit held plus those read first after it (the other
// group; more than there are connections open cannot come), but never longer than half that
// commit's write and sync (and kMaxCommitWait), counted from when its replies were out: a
// client that does not come back costs at most that. A lone client never waits.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace holdfast::wal {

inline constexpr std::chrono::microseconds kMaxCommitWait{200};

struct LoopCommit {
  std::uint64_t changes = 0;        // in the loop's last commit (0: none since the syncer's)
  std::uint64_t arrived_after = 0;  // read in the first round after it
  std::chrono::steady_clock::duration took{};  // its write and sync
};

// `waiting`: changes not yet durable; `clients`: connections open; `since`: time since the last
// commit's replies went out.
inline std::chrono::microseconds commit_wait_for(const LoopCommit& last, std::uint64_t waiting,
                                                 std::uint64_t clients,
                                                 std::chrono::steady_clock::duration since) {
  const std::uint64_t expected = std::min(last.changes + last.arrived_after, clients);
  if (last.changes < 2 || waiting == 0 || waiting >= expected) return {};
  const std::chrono::steady_clock::duration window =
      std::min<std::chrono::steady_clock::duration>(last.took / 2, kMaxCommitWait);
  if (since >= window) return {};
  return std::chrono::ceil<std::chrono::microseconds>(window - since);
}

}  // namespace holdfast::wal
