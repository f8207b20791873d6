// ActiveClients: how many connections sent requests lately, the clients a commit on the loop may
// expect back (LoopHooks::commit_wait, store/wal/commit_wait.h).
//
// With --fsync always the loop waits, after a commit's replies are out, for the changes it
// expects; never for more clients than could come. Counting every connection open overcounts
// the ones that never send: a pool's idle connections, a subscriber, a lock-event watch or
// stream, a connection being closed. With each busy client's change already pending, the loop
// would then wait out its window before every commit for one that never comes.
//
// So time here is counted in requests, not in clock readings: an epoch ends after `kPerClient`
// requests for each connection seen in the epoch before it (at least `kMinRequests`), and the
// count is the larger of the last whole epoch's connections and the current one's. A client that
// keeps one request in flight, as a lock client does, sends several in every epoch and is always
// counted; a connection that sent nothing for an epoch is not. A connection is marked once per
// read of requests (a pipelined burst is one mark), so one busy pipeline cannot end the epochs
// of the others.
//
// On the event loop thread only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace holdfast {

class ActiveClients {
 public:
  static constexpr std::size_t kPerClient = 8;
  static constexpr std::size_t kMinRequests = 64;

  // A connection's mark: where it last counted.
  struct Stamp {
    std::uint64_t epoch = 0;
  };

  // A read of requests arrived on the connection that owns `stamp`.
  void sent(Stamp& stamp) {
    if (stamp.epoch != epoch_) {
      stamp.epoch = epoch_;
      ++now_;
    }
    if (++requests_ >= std::max(kMinRequests, kPerClient * std::max(before_, now_))) {
      before_ = now_;
      now_ = 0;
      requests_ = 0;
      ++epoch_;
    }
  }

  // Connections that sent requests lately.
  std::size_t count() const { return std::max(before_, now_); }

 private:
  std::uint64_t epoch_ = 1;  // a new connection's stamp (0) is of no epoch
  std::size_t now_ = 0;      // connections seen in this epoch
  std::size_t before_ = 0;   // in the last whole one
  std::size_t requests_ = 0;
};

}  // namespace holdfast
