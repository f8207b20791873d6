// LoopHooks: the moments of the event loop a store can use, beside the service's dispatch()
// (server.cc, run_loop). The embedded write-ahead log commits in them, as Redis writes its log
// before it sleeps (store/wal/wal_store.h); a node over PostgreSQL uses none. All on the loop
// thread.
#pragma once

#include <chrono>
#include <cstddef>

namespace holdfast {

class LoopHooks {
 public:
  virtual ~LoopHooks() = default;

  // The loop is about to sleep. A store whose writer is idle may write (and sync) what was
  // submitted on this thread instead of waking the writer: two thread wake-ups fewer per
  // commit. True when it did: the service's dispatch() then has answers to deliver.
  virtual bool before_sleep() { return false; }

  // The loop is about to sleep with changes to commit: how long it should wait first for more
  // to join them (0: commit now). A store that commits on the loop answers more than 0 only
  // while the clients its last commit answered are likely still to come back (of `clients`,
  // the connections that sent requests lately: server/active_clients.h); one that writes lazily on
  // the loop (fsync never), until its oldest change is due (wal_store.h).
  virtual std::chrono::microseconds commit_wait(std::size_t /*clients*/) { return {}; }

  // The loop finished a round of work and has more: a store that leaves submitted changes for
  // before_sleep() hands them to its writer once they have waited a round, so that under load
  // the disk syncs while the loop works. `clients` as in commit_wait.
  virtual void end_of_round(std::size_t /*clients*/) {}
};

}  // namespace holdfast
