// LogWriter: appends frames to one log segment (docs/wal-format.md, section 2).
//
// The caller hands over a run of whole encoded records (a group-commit batch); the writer
// frames it (one frame, or several if it exceeds kMaxFrameBody), and hands header and body
// pieces to the file in one gathered write. Syncing is a separate call so the caller decides
// (fsync always|never) and can time it.
//
// Used by one thread at a time (the syncer thread).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "store/wal/file_system.h"
#include "store/wal/format.h"

namespace holdfast::wal {

using FrameHeader = std::array<char, kFrameHeaderSize>;

// The header of a frame whose body is `body` holding `record_count` records.
FrameHeader encode_frame_header(std::string_view body, std::uint32_t record_count);

class LogWriter {
 public:
  // Creates (or empties) the segment at path and writes its magic; with `sync`, makes the new
  // file durable (file and directory) before returning. With `reserve_chunk` > 0 the writer
  // keeps zero-filled space ahead of its frames (FileSystem::preallocate), extending it a
  // chunk at a time when less than half a chunk would be left, so that commits overwrite
  // allocated blocks.
  static Result<std::unique_ptr<LogWriter>> create(FileSystem& fs, const std::string& dir,
                                                   const std::string& path, bool sync,
                                                   std::uint64_t reserve_chunk = 0);

  // Writes `records` (whole records, as append_record made them) as frames. An empty run
  // writes nothing. An error leaves the segment in an unknown state: stop writing to it.
  Status add_records(std::string_view records);

  Status sync();
  // Ends the segment for good: cuts off unused reserved space (so an older segment always ends
  // with its last frame) and, with `sync`, makes that durable.
  Status finish(bool sync);
  Status close();

  // Bytes in the segment, magic included.
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  LogWriter(std::unique_ptr<WritableFile> file, std::string path, std::uint64_t size,
            std::uint64_t reserve_chunk)
      : file_(std::move(file)),
        path_(std::move(path)),
        size_(size),
        reserve_chunk_(reserve_chunk) {}

  // Zeros up to at least `end` plus half a chunk, to a multiple of the chunk.
  Status reserve(std::uint64_t end);

  std::unique_ptr<WritableFile> file_;
  std::string path_;
  std::uint64_t size_;
  const std::uint64_t reserve_chunk_;
  std::uint64_t reserved_ = 0;  // end of the zero-filled space
  struct Frame {
    std::string_view body;
    std::uint32_t records;
  };
  // Reused across batches so a steady stream of commits allocates nothing.
  std::vector<Frame> frames_;
  std::vector<FrameHeader> headers_;
  std::vector<std::string_view> pieces_;
};

}  // namespace holdfast::wal
