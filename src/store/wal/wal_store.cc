// WalStore: recovery, the loop-thread side of appending, and the syncer thread.
//
// Group commit, step by step:
//  1. append() encodes the record into batch_, a buffer only the loop thread touches (no lock).
//     submit(), which the loop calls after every piece of work, moves batch_ into pending_
//     under mu_ and wakes the syncer if it is idle (once: the first submit marks it busy).
//     With commit_on_loop (the server), the loop moves batch_ once a round instead, at the
//     end of the round and before it sleeps (fsync never with write_on_loop: see below), and
//     wakes the syncer only for a lazy write or as below (fsync always): when the loop is about to
//     sleep, before_sleep() writes and syncs pending_ on the loop thread itself, unless
//     the syncer is writing or the batch needs more than that (a cut, a roll, a repair); and
//     end_of_round() wakes the syncer for a batch that has waited a round of the loop's work.
//     Before it commits, the loop may wait a little for the clients its last commit answered
//     (commit_wait(), commit_wait.h); rounds spent so do not count.
//     log_mu_, held from taking pending_ to the end of the write, keeps the two in order.
//  2. The syncer swaps pending_ with its own empty buffer (both keep their capacity), lets go
//     of mu_, writes the whole batch as one frame with one writev and one fdatasync.
//  3. It publishes the batch's last sequence number (release store) and calls on_durable.
//  4. Meanwhile appends accumulate in pending_; the moment the syncer is free it takes all of
//     them, so the number of syncs follows the disk's latency, not the number of changes.
//
// The syncer never waits to gather a bigger batch (fsync always). Under load the clients
// answered by one sync come back one after another while the loop sends the rest of that
// sync's replies; a sync that starts with the first of them overlaps the loop's work on the
// others, and the next sync takes whatever arrived meanwhile. Waiting for the whole round
// instead leaves the disk idle while the loop works and the loop idle while the disk syncs
// (docs/performance.md, "Rules a change must keep": group commit without waiting to gather).
//
// With fsync never nothing waits for the disk, so submit() wakes the syncer only for the first
// change after a quiet spell: it then writes what has piled up kLazyWrite later (or sooner,
// once kLazyWriteBytes are pending), and sleeps without a timer once nothing is pending. That
// keeps a thread switch off the path of every request on a small machine, and an idle server
// asleep; the price, a kill -9 losing up to kLazyWrite of changes, is within what fsync never
// already gives up. With write_on_loop (a server that does not poll) the loop keeps its changes
// instead: when it runs out of work it sleeps until its oldest change is kLazyWrite old
// (commit_wait), then writes them itself (write_before_sleep; already when they are nearly due, as
// it would otherwise wake for them soon after), so a server answering now and then wakes no second
// thread, and one answering often writes once per kLazyWrite. A loop too busy to sleep (a second
// round of work in a row after they came due) hands changes that old (or kLazyWriteBytes of
// them) to the syncer, which writes them at once.
//
// A snapshot request travels with the batch: its cut is an offset into pending_. The syncer
// writes the part before the cut, starts a new segment, writes the rest, publishes, and only
// then writes the snapshot, so replies never wait for a snapshot to be written.
#include "store/wal/wal_store.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <utility>

#include "store/wal/data_dir.h"
#include "store/wal/record.h"
#include "store/wal/recovery.h"

namespace holdfast::wal {
namespace {

// A batch buffer that a burst made larger than this is given back after use.
constexpr std::size_t kKeepBufferBytes = std::size_t{16} << 20;
// fsync never: how long changes may wait in memory before they are written, and how many bytes.
constexpr auto kLazyWrite = std::chrono::milliseconds(10);
constexpr std::size_t kLazyWriteBytes = std::size_t{256} << 10;
// fsync never: the most the loop writes itself; more goes to the syncer.
constexpr std::size_t kLoopWriteBytes = std::size_t{64} << 10;
// fsync never: a loop about to sleep writes changes this close to due now, while it is awake,
// rather than wake again for them a moment later.
constexpr auto kLoopWriteEarly = kLazyWrite / 4;

void print_fault(const std::optional<Error>& fault) {
  if (fault) {
    std::fprintf(stderr, "holdfast: %s\n", fault->message.c_str());
  } else {
    std::fprintf(stderr, "holdfast: the write-ahead log is writable again\n");
  }
}

}  // namespace

WalStore::WalStore(WalOptions options, const Clock& clock, FileSystem& fs)
    : options_(std::move(options)), clock_(clock), fs_(fs) {}

WalStore::~WalStore() { close(); }

Result<DurableState> WalStore::recover() {
  if (phase_ != Phase::kNew)
    return Error(ErrorCode::kInternal, "WalStore::recover() may be called only once");
  Result<DurableState> state = open();
  if (!state) {
    lock_.reset();
    log_.reset();
    phase_ = Phase::kClosed;
    return state;
  }
  phase_ = Phase::kOpen;
  syncer_ = std::thread([this] { syncer_main(); });
  return state;
}

Result<DurableState> WalStore::open() {
  const std::string& dir = options_.data_dir;
  if (Status s = fs_.create_dir(dir); !s) return std::move(s).error();
  Result<LockAttempt> attempt = fs_.lock_file(join_path(dir, kLockFileName));
  if (!attempt) return std::move(attempt).error();
  if (!attempt->lock) {
    std::string message = "data dir " + dir + " is in use by another holdfast server";
    if (attempt->holder_pid != 0) message += " (pid " + std::to_string(attempt->holder_pid) + ")";
    return Error(ErrorCode::kUnavailable, std::move(message))
        .with("dir", dir)
        .with("pid", attempt->holder_pid);
  }
  lock_ = std::move(attempt->lock);

  Result<RecoveredLog> recovered = recover_log(fs_, dir, clock_.now_ms());
  if (!recovered) return std::move(recovered).error();
  for (const std::string& name : recovered->garbage)
    if (Status s = fs_.remove_file(join_path(dir, name)); !s) return std::move(s).error();

  // Zero-filled space ahead of the frames pays only where commits sync.
  const bool always = options_.fsync == FsyncMode::kAlways;
  log_ = std::make_unique<SegmentLog>(
      fs_, dir, options_.fsync != FsyncMode::kNever,
      always && options_.preallocate_segments ? kReserveChunkBytes : 0);
  if (Status s = log_->open(recovered->next_segment, recovered->live_segments); !s)
    return std::move(s).error();
  log_bytes_.store(log_->live_bytes(), std::memory_order_relaxed);

  // A long log left by the last run counts toward the next snapshot.
  bytes_since_cut_ = log_->live_bytes();
  max_token_ = recovered->state.last_token;
  if (options_.fsync == FsyncMode::kHorizon) {
    horizon_.emplace(options_.horizon);
    horizon_->start(recovered->state);
  }
  return std::move(recovered->state);
}

std::uint64_t WalStore::append(const Change& change) {
  assert(phase_ == Phase::kOpen && "append() before recover() or after close()");
  if (horizon_) return append_with_horizon(change);
  return append_change(change);
}

std::uint64_t WalStore::append_change(const Change& change) {
  const std::uint64_t sequence = ++last_sequence_;
  if (const auto* granted = std::get_if<Granted>(&change))
    max_token_ = std::max(max_token_, granted->hold.token);
  if (const auto* group = std::get_if<GroupGranted>(&change))
    for (const HoldState& hold : group->holds) max_token_ = std::max(max_token_, hold.token);
  if (batch_.empty() && writes_on_loop()) batch_since_ = std::chrono::steady_clock::now();
  const std::size_t bytes = append_record(batch_, change);
  batch_sequence_ = sequence;
  appended_.fetch_add(1, std::memory_order_relaxed);
  if (options_.fsync == FsyncMode::kNever)
    durable_sequence_.store(sequence, std::memory_order_release);
  appended_sequence_.store(sequence, std::memory_order_release);

  bytes_since_cut_ += bytes;
  return sequence;
}

void WalStore::submit() {
  // The loop (commit_on_loop) hands its changes over once a round, in end_of_round() and
  // before_sleep(): one lock a round rather than one a command.
  if (!options_.commit_on_loop) hand_over_batch();
  // Here, between two pieces of work, and never inside append(): the lock table reports some
  // changes before it has applied them (a release is appended, then the key is freed), so a
  // state taken in the middle of an operation could miss a change the log already has before
  // the cut, and compaction would then delete the only record of it.
  if (bytes_since_cut_ >= options_.snapshot_threshold_bytes && state_source_ &&
      !snapshot_in_flight_.load(std::memory_order_acquire))
    request_snapshot();
}

void WalStore::hand_over_batch(bool may_wake) {
  if (batch_.empty()) return;
  const bool sync = std::exchange(sync_wanted_, false);
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    const bool first = pending_.empty();  // after a quiet spell: the lazy writer sleeps
    if (first) {
      pending_.swap(batch_);  // both keep their capacity
    } else {
      pending_.append(batch_);
    }
    pending_sequence_ = batch_sequence_;
    pending_sync_ = pending_sync_ || sync;
    const bool now = options_.fsync == FsyncMode::kAlways
                         ? !options_.commit_on_loop
                         : first || pending_.size() >= kLazyWriteBytes || pending_sync_;
    wake = may_wake && now && claim_syncer();  // one wake-up, however many submits follow
  }
  batch_.clear();
  if (wake) wake_.notify_one();
}

bool WalStore::claim_syncer() { return std::exchange(syncer_idle_, false); }

void WalStore::leave_to_syncer(std::unique_lock<std::mutex>& lock) {
  const bool wake = claim_syncer();
  lock.unlock();
  if (wake) wake_.notify_one();
}

bool WalStore::loop_may_write(const std::unique_lock<std::mutex>& log_lock) const {
  // The syncer keeps what needs more than a write (and a sync): a cut for a snapshot, a
  // fault's repair and retries, a full segment's roll, the last commit of close(). Holding
  // log_mu_, the syncer is not writing; awake, it finds pending_ empty and goes back to sleep.
  return log_lock.owns_lock() && !snapshot_request_ && !stopping_ && !repair_first_ &&
         writing_.empty() && !unavailable_.load(std::memory_order_acquire) &&
         log_->current_bytes() < options_.segment_bytes;
}

bool WalStore::before_sleep() {
  if (writes_on_loop()) return write_before_sleep();
  if (options_.commit_on_loop) hand_over_batch();
  if (!loop_commits()) return false;
  rounds_waited_ = 0;
  std::unique_lock log_lock(log_mu_, std::try_to_lock);
  std::unique_lock lock(mu_);
  if (pending_.empty()) return false;
  if (!loop_may_write(log_lock)) {
    last_loop_commit_.changes = 0;
    leave_to_syncer(lock);
    return false;
  }
  on_loop_.swap(pending_);
  const std::uint64_t sequence = pending_sequence_;
  lock.unlock();
  const auto started = std::chrono::steady_clock::now();
  if (!write_taken(lock, /*at_once=*/false)) {
    last_loop_commit_.changes = 0;
    return false;
  }
  syncs_on_loop_.fetch_add(1, std::memory_order_relaxed);
  last_loop_commit_ = {sequence - durable_sequence_.load(std::memory_order_relaxed), 0,
                       std::chrono::steady_clock::now() - started};
  loop_commit_sequence_ = sequence;
  replies_going_out_ = true;
  durable_sequence_.store(sequence, std::memory_order_release);
  log_bytes_.store(log_->live_bytes(), std::memory_order_relaxed);
  return true;
}

bool WalStore::write_taken(std::unique_lock<std::mutex>& lock, bool at_once) {
  if (Status s = write_and_sync(on_loop_); !s) {
    // The syncer writes it again after cutting this write off, and reports the fault if that
    // fails too. pending_ is still empty: only this thread adds to it.
    lock.lock();
    pending_.swap(on_loop_);
    repair_first_ = true;
    pending_sync_ = pending_sync_ || at_once;  // fsync never: without the lazy wait
    leave_to_syncer(lock);
    return false;
  }
  on_loop_.clear();
  if (on_loop_.capacity() > kKeepBufferBytes) on_loop_.shrink_to_fit();
  return true;
}

bool WalStore::write_before_sleep() {
  // commit_wait() let the loop come here: batch_ is empty or (nearly) due.
  rounds_waited_ = 0;
  if (batch_.empty()) return false;
  hand_over_batch(/*may_wake=*/false);
  std::unique_lock log_lock(log_mu_, std::try_to_lock);
  std::unique_lock lock(mu_);
  if (pending_.empty()) return false;
  // Besides what loop_may_write leaves to the syncer: what it is already gathering, and a
  // large batch, which would stall the loop.
  if (!loop_may_write(log_lock) || !syncer_idle_ || pending_.size() > kLoopWriteBytes) {
    pending_sync_ = true;  // due: written at once, without the lazy wait
    leave_to_syncer(lock);
    return false;
  }
  on_loop_.swap(pending_);
  lock.unlock();
  if (!write_taken(lock, /*at_once=*/true)) return false;
  // Durable since append(): nothing waits for this write, so nothing is published.
  log_bytes_.store(log_->live_bytes(), std::memory_order_relaxed);
  return false;
}

void WalStore::note_replies_out() {
  if (std::exchange(replies_going_out_, false)) {
    replies_out_ = std::chrono::steady_clock::now();
    last_loop_commit_.arrived_after = last_sequence_ - loop_commit_sequence_;
  }
}

void WalStore::end_of_round(std::size_t clients) {
  if (writes_on_loop()) {
    // A loop too busy to sleep: changes that have waited kLazyWrite, or grown large, go to the
    // syncer, to be written at once ("sync" wanted: with fsync never, a write without a wait).
    // A round that finds them due is most often the one that woke for them (the timer, or a
    // request just as they came due): the loop writes them itself when it next sleeps, a
    // moment later. Only a second busy round in a row hands them over.
    if (batch_.empty()) return;
    if (batch_.size() < kLazyWriteBytes && !sync_wanted_ &&
        (std::chrono::steady_clock::now() - batch_since_ < kLazyWrite || ++rounds_waited_ < 2))
      return;
    rounds_waited_ = 0;
    sync_wanted_ = true;
    hand_over_batch();
    return;
  }
  if (options_.commit_on_loop) hand_over_batch();
  if (!loop_commits()) return;
  note_replies_out();
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (pending_.empty()) {
      rounds_waited_ = 0;
      return;
    }
    // One round: the loop may well sleep next and commit it itself. Two: it is busy, so the
    // syncer writes while it works. Rounds spent waiting for the clients of the last commit
    // to come back (commit_wait) do not count: each of them is one client's request.
    if (commit_wait(clients).count() > 0) return;
    if (++rounds_waited_ < 2) return;
    rounds_waited_ = 0;
    last_loop_commit_.changes = 0;
    wake = claim_syncer();
  }
  if (wake) wake_.notify_one();
}

std::chrono::microseconds WalStore::commit_wait(std::size_t clients) {
  if (writes_on_loop()) {
    // fsync never: the loop sleeps until its oldest change is due, then writes (or sooner,
    // when work comes; write_before_sleep).
    if (batch_.empty()) return {};
    const auto left = kLazyWrite - (std::chrono::steady_clock::now() - batch_since_);
    return left > kLoopWriteEarly ? std::chrono::ceil<std::chrono::microseconds>(left)
                                  : std::chrono::microseconds{0};
  }
  if (!loop_commits() || last_loop_commit_.changes < 2) return {};
  note_replies_out();
  return commit_wait_for(last_loop_commit_,
                         last_sequence_ - durable_sequence_.load(std::memory_order_acquire),
                         clients, std::chrono::steady_clock::now() - replies_out_);
}

void WalStore::request_snapshot() {
  // On the loop thread, so the table cannot change while its state is taken.
  hand_over_batch();  // the cut below must follow every change appended so far
  std::optional<ForkedEncoding> child;
  const bool small = options_.encode_in_child_from_holds > 0 && state_size_ &&
                     state_size_() < options_.encode_in_child_from_holds;
  if (options_.encode_snapshots_in_child && !small) {
    Result<ForkedEncoding> forked = ForkedEncoding::start(state_source_, max_token_);
    if (forked) {
      child.emplace(std::move(forked).value());
      snapshots_in_child_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // The horizon so far opens the new segment: the ones before the cut will be deleted.
  if (horizon_) append_horizon(horizon_->restated(clock_.now_ms()));
  EncodedState state;
  if (!child) {
    SnapshotEncoder encoder;  // encodes each hold as the source hands it over: no table copy
    state_source_(encoder);
    encoder.last_token(max_token_);
    state = encoder.take();
  }
  snapshot_in_flight_.store(true, std::memory_order_release);
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    snapshot_request_ = SnapshotRequest{pending_.size(), std::move(state), std::move(child)};
    wake = claim_syncer();
  }
  if (wake) wake_.notify_one();
  bytes_since_cut_ = 0;
}

std::uint64_t WalStore::durable_sequence() const {
  if (options_.fsync == FsyncMode::kHorizon) return horizon_durable_sequence();
  return durable_sequence_.load(std::memory_order_acquire);
}

std::optional<Error> WalStore::fault() const {
  if (!unavailable_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard lock(fault_mu_);
  return shared_fault_;
}

void WalStore::retry_now() {
  {
    std::lock_guard lock(mu_);
    retry_requested_ = true;
  }
  wake_.notify_one();
}

void WalStore::set_on_durable(std::function<void(std::uint64_t)> fn) {
  std::lock_guard lock(callback_mu_);
  on_durable_ = std::move(fn);
}

void WalStore::set_state_source(StateSource source) { state_source_ = std::move(source); }

void WalStore::set_state_size(std::function<std::size_t()> size) { state_size_ = std::move(size); }

StoreStats WalStore::stats() const {
  StoreStats s;
  s.appended = appended_.load(std::memory_order_relaxed);
  s.syncs = syncs_.load(std::memory_order_relaxed);
  s.syncs_on_loop = syncs_on_loop_.load(std::memory_order_relaxed);
  s.sync_nanos = sync_nanos_.load(std::memory_order_relaxed);
  s.snapshots = snapshots_.load(std::memory_order_relaxed);
  s.snapshots_skipped = snapshots_skipped_.load(std::memory_order_acquire);
  s.snapshots_in_child = snapshots_in_child_.load(std::memory_order_relaxed);
  s.snapshot_in_progress = snapshot_in_flight_.load(std::memory_order_acquire);
  s.log_bytes = log_bytes_.load(std::memory_order_relaxed);
  s.faults = faults_.load(std::memory_order_relaxed);
  s.fault = fault();
  return s;
}

void WalStore::close() {
  if (phase_ == Phase::kOpen) {
    // Written last and synced with the rest: the next start knows nothing answered was lost.
    if (horizon_) append_horizon(horizon_->closing(clock_.now_ms()));
    hand_over_batch();
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    syncer_.join();
    // After a fault that the last try did not repair, the segment is left as the failed write
    // left it: recovery cuts off a torn tail.
    if (Status s = log_->close(/*finish=*/!fault_); !s && !fault_)
      std::fprintf(stderr, "holdfast: closing the write-ahead log failed: %s\n",
                   s.error().message.c_str());
    if (fault_ && !writing_.empty())
      std::fprintf(stderr,
                   "holdfast: stopped with %zu bytes of changes the log could not take; none "
                   "of them was answered\n",
                   writing_.size());
    log_.reset();
  }
  lock_.reset();
  phase_ = Phase::kClosed;
}

void WalStore::syncer_main() {
  std::unique_lock lock(mu_);
  for (;;) {
    syncer_idle_ = true;
    if (fault_) {
      // Changes pile up in pending_ meanwhile; they are written with the retry.
      wake_.wait_for(lock, std::chrono::milliseconds(options_.retry_interval_ms),
                     [this] { return retry_requested_ || snapshot_written_ || stopping_; });
      retry_requested_ = false;
    } else if (options_.fsync == FsyncMode::kAlways) {
      // Idle is set each time the syncer goes (back) to sleep: a wake-up can find its work gone
      // (the loop committed it), and the next one must not be skipped as already sent.
      wake_.wait(lock, [this] {
        const bool work = !pending_.empty() || snapshot_request_ || snapshot_written_ || stopping_;
        syncer_idle_ = !work;
        return work;
      });
    } else {
      // Lazy writes: asleep, with no timer, while nothing is pending (the first change after a
      // quiet spell wakes it); then the changes that follow have up to kLazyWrite to join.
      wake_.wait(lock, [this] {
        syncer_idle_ = pending_.empty() && !snapshot_request_ && !snapshot_written_ && !stopping_;
        return !syncer_idle_;
      });
      wake_.wait_for(lock, kLazyWrite, [this] {
        syncer_idle_ = !(pending_.size() >= kLazyWriteBytes || pending_sync_ || snapshot_request_ ||
                         snapshot_written_ || stopping_);
        return !syncer_idle_;
      });
    }
    syncer_idle_ = false;
    // The loop may be writing a batch of its own (before_sleep): after it.
    lock.unlock();
    std::unique_lock log_lock(log_mu_);
    lock.lock();
    if (snapshot_written_) {
      finish_snapshot(lock);
      continue;  // then whatever is pending
    }
    if (!fault_ && pending_.empty() && !snapshot_request_) {
      if (stopping_) break;  // everything is written
      continue;              // the loop wrote it
    }
    // After a fault writing_ still holds what was not written; the new changes follow it.
    if (writing_.empty()) {
      writing_.swap(pending_);
    } else {
      writing_.append(pending_);
      pending_.clear();
    }
    const std::uint64_t last_sequence = pending_sequence_;
    std::optional<SnapshotRequest> snapshot = std::move(snapshot_request_);
    snapshot_request_.reset();
    // fsync horizon: a cut rolls the segment, which must be synced first.
    writing_sync_ = writing_sync_ || std::exchange(pending_sync_, false) ||
                    (snapshot && options_.fsync == FsyncMode::kHorizon);
    const bool last_try = stopping_;
    const bool repair = fault_ || std::exchange(repair_first_, false);
    lock.unlock();

    if (fault_) drop_snapshot(snapshot);  // its cut was made in a batch of its own
    Status s = repair ? log_->repair() : ok_status();
    if (s) s = commit(writing_, last_sequence, snapshot);
    drop_snapshot(snapshot);  // still here: the commit failed before the cut
    if (!s) {
      enter_fault(s.error());
    } else {
      writing_sync_ = false;
      if (fault_) leave_fault();
    }
    if (writing_.empty() && writing_.capacity() > kKeepBufferBytes) writing_.shrink_to_fit();
    lock.lock();
    if (fault_ && last_try) break;
  }
  // Stopping: a snapshot still being written is finished (and compacted) before close().
  if (snapshot_writer_.joinable()) {
    wake_.wait(lock, [this] { return snapshot_written_; });
    lock.unlock();
    std::lock_guard log_lock(log_mu_);
    lock.lock();
    finish_snapshot(lock);
  }
}

void WalStore::start_snapshot_writer(EncodedState state, std::optional<ForkedEncoding> child) {
  assert(!snapshot_writer_.joinable() && "one snapshot in flight at a time");
  snapshot_number_ = log_->current_number();
  snapshot_writer_ = std::thread([this, number = snapshot_number_, state = std::move(state),
                                  child = std::move(child)]() mutable {
    // A child's holds go from its pipe to the file a chunk at a time.
    Status s = child ? write_snapshot(fs_, options_.data_dir, number, *child)
                     : write_snapshot(fs_, options_.data_dir, number, state);
    std::optional<Error> skipped;
    if (!s && child && child->failed()) {
      skipped = std::move(s).error();  // the child's fault: nothing was written
      s = ok_status();
    }
    {
      std::lock_guard lock(mu_);
      snapshot_written_ = true;
      if (!s) snapshot_error_ = s.error();
      snapshot_skipped_ = std::move(skipped);
    }
    wake_.notify_one();
  });
}

void WalStore::finish_snapshot(std::unique_lock<std::mutex>& lock) {
  snapshot_written_ = false;
  std::optional<Error> error = std::exchange(snapshot_error_, std::nullopt);
  std::optional<Error> skipped = std::exchange(snapshot_skipped_, std::nullopt);
  lock.unlock();
  finish_snapshot_unlocked(std::move(error), std::move(skipped));
  lock.lock();
}

void WalStore::finish_snapshot_unlocked(std::optional<Error> error, std::optional<Error> skipped) {
  snapshot_writer_.join();
  if (error) skipped = std::move(error);  // a full disk, say: the log is still whole
  if (skipped) {
    // Nothing was written, so nothing may be deleted; the log is whole and the next
    // threshold asks again.
    std::fprintf(stderr, "holdfast: snapshot skipped: %s\n", skipped->message.c_str());
    snapshot_in_flight_.store(false, std::memory_order_release);
    snapshots_skipped_.fetch_add(1, std::memory_order_release);
    return;
  }
  snapshots_.fetch_add(1, std::memory_order_relaxed);
  // A file compaction could not remove stays until the next one: it lists the directory.
  if (Status s = log_->compact_below(snapshot_number_); !s)
    std::fprintf(stderr, "holdfast: compacting the log failed: %s\n", s.error().message.c_str());
  log_bytes_.store(log_->live_bytes(), std::memory_order_relaxed);
  snapshot_in_flight_.store(false, std::memory_order_release);
}

Status WalStore::commit(std::string& batch, std::uint64_t last_sequence,
                        std::optional<SnapshotRequest>& snapshot) {
  if (!snapshot) {
    if (Status s = write_and_sync(batch); !s) return s;
    batch.clear();
    publish(last_sequence);
    // A failed roll leaves nothing unwritten; the next write repairs the log first. Only a
    // synced segment may be finished (fsync horizon syncs lazily).
    if (log_->current_bytes() >= options_.segment_bytes) {
      if (options_.fsync == FsyncMode::kHorizon && !writing_sync_)
        if (Status s = log_->sync(); !s) return s;
      if (Status s = log_->roll(); !s) return s;
    }
    log_bytes_.store(log_->live_bytes(), std::memory_order_relaxed);
    return ok_status();
  }
  // The cut: the records before it end segment K, the snapshot is the state at the start of
  // segment K+1.
  if (Status s = write_and_sync(std::string_view(batch).substr(0, snapshot->cut)); !s) return s;
  batch.erase(0, snapshot->cut);  // durable, but published only with the rest
  snapshot->cut = 0;
  if (Status s = log_->roll(); !s) return s;
  SnapshotRequest cut = std::move(*snapshot);
  snapshot.reset();
  if (Status s = write_and_sync(batch); !s) {
    drop_snapshot_state(cut);
    return s;
  }
  batch.clear();
  publish(last_sequence);
  // The snapshot is written beside the commits that follow; finish_snapshot() compacts.
  start_snapshot_writer(std::move(cut.state), std::move(cut.child));
  log_bytes_.store(log_->live_bytes(), std::memory_order_relaxed);
  return ok_status();
}

Status WalStore::write_and_sync(std::string_view records) {
  if (records.empty()) return ok_status();
  if (Status s = log_->append(records); !s) return s;
  if (options_.fsync == FsyncMode::kNever ||
      (options_.fsync == FsyncMode::kHorizon && !writing_sync_))
    return ok_status();
  const auto start = std::chrono::steady_clock::now();
  Status s = log_->sync();
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  syncs_.fetch_add(1, std::memory_order_relaxed);
  sync_nanos_.fetch_add(static_cast<std::uint64_t>(nanos), std::memory_order_relaxed);
  return s;
}

void WalStore::publish(std::uint64_t sequence) {
  // With fsync never, append() already published; never move backwards.
  if (options_.fsync == FsyncMode::kAlways)
    durable_sequence_.store(sequence, std::memory_order_release);
  if (options_.fsync == FsyncMode::kHorizon && writing_sync_)
    synced_sequence_.store(sequence, std::memory_order_release);
  std::lock_guard lock(callback_mu_);
  if (on_durable_) on_durable_(sequence);
}

void WalStore::drop_snapshot(std::optional<SnapshotRequest>& snapshot) {
  if (!snapshot) return;
  drop_snapshot_state(*snapshot);
  snapshot.reset();
}

void WalStore::drop_snapshot_state(SnapshotRequest& snapshot) {
  snapshot.child.reset();  // ends the encoder child
  snapshots_skipped_.fetch_add(1, std::memory_order_release);
  snapshot_in_flight_.store(false, std::memory_order_release);
}

void WalStore::enter_fault(const Error& cause) {
  Error fault(ErrorCode::kStoreUnavailable, "the write-ahead log cannot be written (" +
                                                cause.message +
                                                "); changes are refused until it can");
  fault.with("retryAfterMs", options_.retry_interval_ms);
  const bool first = !fault_;
  fault_ = fault;
  {
    std::lock_guard lock(fault_mu_);
    shared_fault_ = std::move(fault);
  }
  if (!first) return;
  faults_.fetch_add(1, std::memory_order_relaxed);
  unavailable_.store(true, std::memory_order_release);
  if (options_.on_fault) {
    options_.on_fault(fault_);
  } else {
    print_fault(fault_);
  }
  notify();
}

void WalStore::leave_fault() {
  fault_.reset();
  unavailable_.store(false, std::memory_order_release);
  {
    std::lock_guard lock(fault_mu_);
    shared_fault_.reset();
  }
  if (options_.on_fault) {
    options_.on_fault(std::nullopt);
  } else {
    print_fault(std::nullopt);
  }
  notify();
}

void WalStore::notify() {
  std::lock_guard lock(callback_mu_);
  if (on_durable_) on_durable_(durable_sequence_.load(std::memory_order_acquire));
}

}  // namespace holdfast::wal
