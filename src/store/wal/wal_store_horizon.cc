// WalStore with fsync horizon: which answers run ahead of the disk (horizon.h decides), and
// the sequence number answers may leave at.
//
// durable_sequence() is every change appended, unless a change that must wait for the disk
// (the barrier) is not synced yet; then it is the synced sequence. Answers leave in order
// (service/embedded/reply_queue.h), so the few that wait hold back the ones after them by
// one sync at most.
#include "store/wal/wal_store.h"

namespace holdfast::wal {

std::uint64_t WalStore::append_with_horizon(const Change& change) {
  const HorizonKeeper::Need need =
      horizon_->classify(change, clock_.now_ms(), synced_sequence_.load(std::memory_order_acquire));
  if (need.record) append_horizon(*need.record);
  const std::uint64_t sequence = append_change(change);
  if (need.wait_for_sync) {
    barrier_.store(sequence, std::memory_order_release);
    sync_wanted_ = true;
  }
  return sequence;
}

void WalStore::append_horizon(const LeaseHorizon& record) {
  const std::uint64_t sequence = append_change(record);
  horizon_->appended(record, sequence);
  sync_wanted_ = true;
}

void WalStore::require_sync() {
  if (!horizon_) return;  // fsync always waits for every change, fsync never for none
  // What was appended may be handed over already: a record of its own asks for the sync.
  if (batch_.empty()) append_horizon(horizon_->restated(clock_.now_ms()));
  barrier_.store(last_sequence_, std::memory_order_release);
  sync_wanted_ = true;
}

std::uint64_t WalStore::horizon_durable_sequence() const {
  const std::uint64_t synced = synced_sequence_.load(std::memory_order_acquire);
  if (synced >= barrier_.load(std::memory_order_acquire))
    return appended_sequence_.load(std::memory_order_acquire);
  return synced;
}

}  // namespace holdfast::wal
