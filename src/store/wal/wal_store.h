// WalStore: the embedded Store, a write-ahead log with group commit and snapshots in a data
// dir. The format is docs/wal-format.md; the Store contract is store/store.h.
//
// Lifecycle:
//  1. Construct with options, a clock and a file system; nothing touches the disk yet.
//  2. recover() (once): locks DIR/LOCK, loads the newest snapshot, replays the log, truncates
//     a torn tail, starts a new segment and the syncer thread, returns the durable state.
//  3. append(change) on the loop thread: the record goes into the pending batch; the syncer
//     thread (or, with commit_on_loop, the loop itself before it sleeps: before_sleep)
//     writes the batch as one frame and calls fdatasync once for all of it, then
//     advances durable_sequence() and calls on_durable. Appends made while a sync runs form
//     the next batch. When the log since the last snapshot outgrows snapshot_threshold_bytes,
//     the next submit() (between operations, never append()) asks the state source for the
//     live state; the syncer cuts the log there, a snapshot thread writes the snapshot while
//     commits go on, and then the syncer deletes the log before it.
//  4. When writing or syncing fails, the store reports fault() and the syncer keeps the
//     batch, cuts the failed write off the log (SegmentLog::repair) and writes the batch
//     again every retry_interval_ms until it succeeds; nothing is published meanwhile.
//  5. close() (or the destructor): commits what is pending (one last try after a fault),
//     stops the thread, unlocks.
//
// With fsync horizon (horizon.h) the syncer writes lazily as with fsync never, and syncs a
// batch only when it carries a LeaseHorizon record or a change that must wait for the disk;
// durable_sequence() runs ahead of the disk up to the first such change not yet synced. The
// horizon side of the store lives in wal_store_horizon.cc.
//
// Sequence numbers restart at 1 in every process (they are not stored on disk).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/clock.h"
#include "store/store.h"
#include "store/wal/commit_wait.h"
#include "store/wal/file_system.h"
#include "store/wal/forked_encoder.h"
#include "store/wal/format.h"
#include "store/wal/horizon.h"
#include "store/wal/segment_log.h"
#include "store/wal/snapshot.h"

namespace holdfast::wal {

enum class FsyncMode : std::uint8_t {
  kAlways,   // a change is durable once fdatasync returned for its batch (the default)
  kNever,    // never fdatasync: durable at append; kill -9 loses the unwritten batch, power
             // loss loses what the kernel had not written back. Benchmarks and caches only.
  kHorizon,  // answers before the disk within a durable lease horizon; after a crash no new
             // grant until it has passed (horizon.h, docs/horizon.md)
};

struct WalOptions {
  std::string data_dir = "./data";
  FsyncMode fsync = FsyncMode::kAlways;
  // Log bytes appended since the last snapshot that trigger the next one (needs a state
  // source). Restart replays at most about this much log.
  std::uint64_t snapshot_threshold_bytes = kDefaultSnapshotThresholdBytes;
  // A segment that has grown past this is closed and the next one started.
  std::uint64_t segment_bytes = kDefaultSegmentBytes;
  // With fsync always, keep zero-filled space ahead of the log's frames, so that a commit's
  // fdatasync has no size or extent change to write (docs/wal-format.md, section 4).
  bool preallocate_segments = true;
  // Encode snapshots in a forked child (ForkedEncoding), so the loop thread pauses for fork()
  // only; false encodes on the loop thread. If fork fails, the loop encodes; if the child
  // fails, that snapshot is skipped (the log stays whole) and a later one is tried.
  bool encode_snapshots_in_child = false;
  // With encode_snapshots_in_child and a state size (set_state_size): a state of fewer holds
  // than this is encoded on the loop thread, which costs it less than fork() and the
  // copy-on-write faults after it. 0: always in the child.
  std::size_t encode_in_child_from_holds = 0;
  // With fsync always (ignored with never): submit() leaves the changes for the event loop, which
  // writes and syncs them itself when it is about to sleep (before_sleep), or hands them to
  // the syncer once they have waited a round of its work (end_of_round). Off: submit() wakes the
  // syncer.
  bool commit_on_loop = false;
  // With fsync never and commit_on_loop: the loop keeps its changes and writes them itself once
  // the oldest is kLazyWrite old, sleeping until then (commit_wait). For a loop that sleeps
  // when idle; one that polls instead (--idle-poll-us) hands them to the syncer every round.
  bool write_on_loop = false;
  // After writing or syncing the log fails (a full disk, EIO), how long the syncer waits
  // before it tries again. Meanwhile the store reports fault() and keeps every change it was
  // given in memory, in order (docs/wal-format.md, section 8).
  std::int64_t retry_interval_ms = 1000;
  // Called from the syncer thread when the log stops being writable (with the fault) and when
  // it is writable again (nullopt): once each way, however many retries fail in between.
  // Default: a line on stderr.
  std::function<void(const std::optional<Error>&)> on_fault;
  // fsync horizon: its slack, margin and token block.
  HorizonOptions horizon;
};

class WalStore final : public Store {
 public:
  // `clock` and `fs` must outlive the store.
  WalStore(WalOptions options, const Clock& clock, FileSystem& fs = posix_file_system());
  ~WalStore() override;  // close()

  WalStore(const WalStore&) = delete;
  WalStore& operator=(const WalStore&) = delete;

  // Errors: the data dir is locked by another server ("data dir DIR is in use by another
  // holdfast server (pid N)"), corruption (message and details name the file and offset), or
  // an I/O error. Calling it a second time is an error.
  Result<DurableState> recover() override;

  // REQUIRES: recover() succeeded and close() was not called. Loop thread only.
  std::uint64_t append(const Change& change) override;
  void submit() override;
  bool before_sleep() override;
  std::chrono::microseconds commit_wait(std::size_t clients) override;
  void end_of_round(std::size_t clients) override;

  std::uint64_t durable_sequence() const override;
  std::optional<Error> fault() const override;
  void require_sync() override;

  // After a fault: tries again now instead of at the next scheduled retry. Thread-safe.
  void retry_now();

  // Thread-safe; fn runs on the syncer thread and must not call set_on_durable.
  void set_on_durable(std::function<void(std::uint64_t)> fn) override;

  // The source must return every hold the table has, including the effects of every change
  // appended so far; it may include effects of changes not yet appended (see the format doc,
  // section 6). Loop thread only.
  void set_state_source(StateSource source) override;
  void set_state_size(std::function<std::size_t()> size) override;

  StoreStats stats() const override;

  void close() override;

 private:
  struct SnapshotRequest {
    std::size_t cut;  // offset in the pending batch: the snapshot is the state before it
    EncodedState state;
    std::optional<ForkedEncoding> child;  // set: the state is still being encoded there
  };
  enum class Phase : std::uint8_t { kNew, kOpen, kClosed };

  Result<DurableState> open();
  // batch_ to pending_, waking the syncer if it should write (and `may_wake`).
  void hand_over_batch(bool may_wake = true);
  bool write_before_sleep();  // fsync never, commit_on_loop: before_sleep
  // Writes on_loop_ (taken from pending_, `lock` released) on the loop. On failure gives it
  // back to the syncer to repair and write again (`at_once`: without the lazy wait); false.
  bool write_taken(std::unique_lock<std::mutex>& lock, bool at_once);
  // Holding mu_: marks the syncer busy and says whether it must be notified (it was idle).
  bool claim_syncer();
  // Holding mu_ through `lock`: leaves pending_ to the syncer, waking it if it was idle, and
  // lets go of mu_.
  void leave_to_syncer(std::unique_lock<std::mutex>& lock);
  // Holding mu_ (and trying `log_lock`): whether the loop may write pending_ itself.
  bool loop_may_write(const std::unique_lock<std::mutex>& log_lock) const;
  void note_replies_out();  // commit_wait: the first look after a loop commit starts its wait
  bool loop_commits() const {
    return options_.commit_on_loop && options_.fsync == FsyncMode::kAlways;
  }
  bool writes_on_loop() const {
    return options_.commit_on_loop && options_.write_on_loop && options_.fsync == FsyncMode::kNever;
  }
  void request_snapshot();
  void syncer_main();
  // Writes `batch` (and cuts the log for `snapshot`), then publishes last_sequence. Erases
  // from `batch` what became durable, and consumes `snapshot` once its cut is made; on error
  // the rest of the batch is still to be written.
  Status commit(std::string& batch, std::uint64_t last_sequence,
                std::optional<SnapshotRequest>& snapshot);
  Status write_and_sync(std::string_view records);
  void publish(std::uint64_t sequence);
  void start_snapshot_writer(EncodedState state, std::optional<ForkedEncoding> child);
  // Syncer thread, holding mu_, after the snapshot writer reported: takes its report, then
  // (without mu_) joins it and compacts, or fails, or after a skipped snapshot just lets the
  // next one be requested.
  void finish_snapshot(std::unique_lock<std::mutex>& lock);
  void finish_snapshot_unlocked(std::optional<Error> error, std::optional<Error> skipped);
  // A snapshot that will not be taken (a fault came first): the next threshold asks again.
  void drop_snapshot(std::optional<SnapshotRequest>& snapshot);
  void drop_snapshot_state(SnapshotRequest& snapshot);
  // Syncer thread: the log failed (again), or works again.
  void enter_fault(const Error& cause);
  void leave_fault();
  void notify();  // on_durable with the current durable sequence

  // fsync horizon (wal_store_horizon.cc), loop thread.
  std::uint64_t append_change(const Change& change);  // any mode: encodes, numbers, counts
  std::uint64_t append_with_horizon(const Change& change);
  void append_horizon(const LeaseHorizon& record);
  std::uint64_t horizon_durable_sequence() const;

  const WalOptions options_;
  const Clock& clock_;
  FileSystem& fs_;
  Phase phase_ = Phase::kNew;
  std::unique_ptr<FileLock> lock_;

  // Loop thread only.
  std::uint64_t last_sequence_ = 0;
  std::uint64_t bytes_since_cut_ = 0;
  std::uint64_t max_token_ = 0;  // feeds snapshots' last_token
  StateSource state_source_;
  std::function<std::size_t()> state_size_;
  std::string batch_;                                  // appended since the last submit()
  std::uint64_t batch_sequence_ = 0;                   // the last sequence number in batch_
  std::optional<HorizonKeeper> horizon_;               // fsync horizon only
  bool sync_wanted_ = false;                           // batch_ must be synced (fsync horizon)
  std::chrono::steady_clock::time_point batch_since_;  // fsync never: batch_'s first change
  std::string on_loop_;                                // pending_ as before_sleep() writes it
  // Rounds of work that pending_ (fsync always) or a due batch_ (fsync never, write_on_loop)
  // waited for the loop to write it before it sleeps.
  int rounds_waited_ = 0;
  // The loop's last commit (commit_wait.h): its changes (0 once the syncer took over), those
  // read in the first round after it and when that round ended (its replies are out by then;
  // or the first look for work), and its last sequence number.
  LoopCommit last_loop_commit_;
  std::uint64_t loop_commit_sequence_ = 0;
  bool replies_going_out_ = false;
  std::chrono::steady_clock::time_point replies_out_{};

  // Held by the thread that writes to log_ (the syncer, or the loop in before_sleep),
  // from before it takes pending_ until its write is done, so batches reach the log in order.
  // Taken before mu_, never while holding it; the loop only tries it.
  std::mutex log_mu_;

  // Shared between the loop and the syncer thread, under mu_. Held only to hand over or swap
  // buffers, never during I/O.
  std::mutex mu_;
  std::condition_variable wake_;
  std::string pending_;
  std::uint64_t pending_sequence_ = 0;  // the last sequence number in pending_
  bool pending_sync_ = false;           // pending_ must be synced (fsync horizon)
  std::optional<SnapshotRequest> snapshot_request_;
  bool syncer_idle_ = false;
  bool stopping_ = false;
  bool retry_requested_ = false;
  bool repair_first_ = false;  // a write on the loop failed: the syncer repairs before it writes
  // Set by the snapshot writer when it is done (with its error, if any); taken by the syncer.
  bool snapshot_written_ = false;
  std::optional<Error> snapshot_error_;    // writing it failed: nothing is deleted
  std::optional<Error> snapshot_skipped_;  // encoding it in the child failed: none written

  // Syncer thread only (after open()), and under log_mu_.
  std::string writing_;              // swapped with pending_: both keep their capacity
  bool writing_sync_ = false;        // writing_ is synced when written (fsync horizon)
  std::unique_ptr<SegmentLog> log_;  // under log_mu_
  // Set while the log cannot be written: the next write repairs it first. writing_ then holds
  // the changes still to be written (published only once they are).
  std::optional<Error> fault_;
  // The snapshot being written, at most one (snapshot_in_flight_ holds off the next): its
  // number, the segment it is the state at the start of, and its writer thread.
  std::uint64_t snapshot_number_ = 0;
  std::thread snapshot_writer_;

  std::atomic<std::uint64_t> durable_sequence_{0};
  // fsync horizon: the last sequence synced, the last appended, and the last one whose answer
  // must wait for a sync.
  std::atomic<std::uint64_t> synced_sequence_{0};
  std::atomic<std::uint64_t> appended_sequence_{0};
  std::atomic<std::uint64_t> barrier_{0};
  std::atomic<bool> snapshot_in_flight_{false};
  std::atomic<std::uint64_t> appended_{0};
  std::atomic<std::uint64_t> syncs_{0};
  std::atomic<std::uint64_t> syncs_on_loop_{0};
  std::atomic<std::uint64_t> sync_nanos_{0};
  std::atomic<std::uint64_t> snapshots_{0};
  std::atomic<std::uint64_t> snapshots_skipped_{0};
  std::atomic<std::uint64_t> snapshots_in_child_{0};
  std::atomic<std::uint64_t> log_bytes_{0};
  std::atomic<std::uint64_t> faults_{0};
  // fault_ as the other threads see it: a flag for the hot path, the error under fault_mu_.
  std::atomic<bool> unavailable_{false};
  mutable std::mutex fault_mu_;
  std::optional<Error> shared_fault_;

  std::mutex callback_mu_;
  std::function<void(std::uint64_t)> on_durable_;

  std::thread syncer_;
};

}  // namespace holdfast::wal
