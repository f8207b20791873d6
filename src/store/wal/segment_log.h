// SegmentLog: the log as a sequence of segment files, from the writer's side. It appends to
// the newest segment, starts the next one (by size, or at a snapshot's cut), and, once a
// snapshot is written, deletes what it made redundant (docs/wal-format.md, section 6).
//
// Used by the syncer thread only (after recovery created it on the loop thread); a snapshot
// file itself may be written by another thread (write_snapshot), compact_below() after it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/hold.h"
#include "store/wal/file_system.h"
#include "store/wal/log_writer.h"

namespace holdfast::wal {

class SegmentLog {
 public:
  // sync_new_files: make a new segment (its magic and its directory entry) durable when it is
  // started (fsync always); false for fsync never. reserve_chunk: zero-filled space kept
  // ahead of the frames, a chunk at a time (0: none; LogWriter::create), so that commits sync
  // data only; a finished segment is cut back to its last frame.
  SegmentLog(FileSystem& fs, std::string dir, bool sync_new_files, std::uint64_t reserve_chunk = 0);

  // Starts writing segment `number`. `earlier` are the segments before it that are still part
  // of the log (number, bytes), for live_bytes().
  Status open(std::uint64_t number,
              const std::vector<std::pair<std::uint64_t, std::uint64_t>>& earlier);

  // Writes whole encoded records to the current segment (no sync).
  Status append(std::string_view records);
  // fdatasync of the current segment.
  Status sync();
  // Ends the current segment and starts the next. REQUIRES: the current one is synced (or
  // fsync never), so only the newest segment can ever have a torn tail.
  Status roll();

  // After a failed append, sync or roll: puts the log back in a state to append to, never
  // trusting the file that failed. The current segment is cut back to its last whole frame
  // that a sync confirmed (every frame, with fsync never), dropping whatever the failed write
  // left after it (a torn frame, or frames whose sync failed: after a failed fdatasync the
  // kernel may have dropped the pages, and a later one on the same file may report success
  // without writing them), and the next segment is started. A segment with no frame is
  // written anew instead, so retries against a full disk do not pile up empty segments. On
  // error, call it again later.
  Status repair();

  // Deletes every segment and snapshot numbered below `snapshot`, which must be a durable
  // snap-<snapshot>: write_snapshot() of the state at the start of that segment, written on
  // another thread while this log went on appending and rolling. Syncs the directory.
  Status compact_below(std::uint64_t snapshot);

  // Closes the current segment; with `finish`, first cuts off its unused reserved space.
  Status close(bool finish);

  std::uint64_t current_number() const { return number_; }
  std::uint64_t current_bytes() const { return writer_ ? writer_->size() : 0; }
  // Bytes of every segment since the last snapshot: what a restart would replay.
  std::uint64_t live_bytes() const;

 private:
  Status start(std::uint64_t number);

  FileSystem& fs_;
  const std::string dir_;
  const bool sync_new_files_;
  const std::uint64_t reserve_chunk_;
  std::uint64_t number_ = 0;
  std::unique_ptr<LogWriter> writer_;
  // Bytes of the current segment that end with a whole frame and are durable (synced, or
  // written with fsync never): where repair() cuts it.
  std::uint64_t whole_ = 0;
  std::map<std::uint64_t, std::uint64_t> finished_;  // finished segments still live: bytes
};

}  // namespace holdfast::wal
