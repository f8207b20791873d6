// PgBackend's shared and semaphore holds (docs/lock-kinds.md) over holdfast_members
// (hold_rows.h):
//  1. A grant is holdfast_grant_member(), one statement (do_acquire_member in pg_acquire.cc):
//     it checks the key's kind, re-takes the caller's own hold of the mode, refuses to pass a
//     request another node queued earlier (holdfast_queue), and grants when the request fits
//     beside the key's holds.
//  2. A blocked request waits in this node's FIFO queue like an exclusive one and, in
//     addition, has a seat (a row in holdfast_queue) from before its first attempt until it is
//     granted (the grant deletes it) or leaves (its deletion notifies the key's waiters).
//     After a member grant the next waiter of this node tries at once: consecutive shared
//     waiters are granted one right after the other.
//  3. Status, holder and list read the key's live members when its row is a group.
#include <spdlog/spdlog.h>

#include "core/kind_conflict.h"
#include "service/postgres/pg_backend.h"

namespace holdfast {
namespace {

std::uint32_t kind_of(LockMode mode, std::uint32_t permits) {
  return mode == LockMode::kSemaphore ? permits : 0;
}

}  // namespace

Status PgBackend::QueueSeat::join(std::string_view key, LockMode mode, std::uint32_t permits) {
  auto seq = node_.db(node_.holds_->queue_join(key, node_.node_id_, mode, permits));
  if (!seq.ok()) return std::move(seq).error();
  seq_ = *seq;
  return ok_status();
}

void PgBackend::QueueSeat::leave() {
  if (!seq_) return;
  const std::int64_t seq = *seq_;
  seq_.reset();
  if (auto st = node_.holds_->queue_leave(seq); !st.ok()) {
    // Left behind, the row would hold back other nodes' requests for the key: retry it from
    // the housekeeper (and it goes with this node's row when the node stops or dies).
    spdlog::warn("leaving the queue (seq {}): {}", seq, st.error().message);
    node_.housekeeper_->defer([&node = node_, seq] { (void)node.holds_->queue_leave(seq); });
  }
}

Status PgBackend::kind_seen(pg::Grant& seen, bool blocking, std::uint32_t wanted,
                            std::string_view key, QueueSeat& seat) {
  if (seen.holder_mode == LockMode::kExclusive) return ok_status();
  const std::uint32_t current = kind_of(seen.holder_mode, seen.holder_permits);
  if (current != wanted) {
    seen.other_kind = current;
    return ok_status();
  }
  if (blocking && !seat.seq()) return seat.join(key, LockMode::kExclusive, 0);
  return ok_status();
}

Result<std::vector<HoldState>> PgBackend::group_members(const HoldState& group) {
  return db(holds_->members(group.key, group.mode, group.permits));
}

Result<StatusView> PgBackend::group_status(StatusView s, const HoldState& group) {
  auto members = group_members(group);
  if (!members.ok()) return std::move(members).error();
  auto closed = holds_->closed_until(group.key);  // an ended member's lock-delay
  if (!closed.ok()) return std::move(closed).error();
  s.lock_delay_until = *closed;
  // The last lease ended between the two reads: the key is free, or closed by that delay.
  if (members->empty()) return s;
  s.held = true;
  s.mode = group.mode;
  s.holders = std::move(*members);
  s.hold = s.holders.back();
  if (group.mode == LockMode::kSemaphore) {
    std::uint32_t used = 0;
    for (const HoldState& h : s.holders) used += h.take;
    s.permits = group.permits;
    s.free_permits = group.permits > used ? group.permits - used : 0;
  }
  return s;
}

}  // namespace holdfast
