// ForkedEncoding: a snapshot's state encoded in a child process, so that the loop thread
// pauses only for fork() instead of for the whole encoding (docs/wal-format.md, section 6).
//
//  1. start() (loop thread): pipe, fork. The child is a copy-on-write image of the process at
//     that instant, so the state source sees the table exactly as it is at the cut. The child
//     closes every descriptor but stdio and the pipe (the data dir's lock among them), runs
//     the source into a SnapshotEncoder, writes the EncodedState to the pipe and _exit()s,
//     also when the source throws. It touches nothing else (no file system, no lock another
//     thread may have held).
//  2. finish() (the snapshot writer thread): reads the whole stream, reaps the child, and
//     answers the state, or an error if the child failed or the stream is incomplete.
//  3. Destroyed before finish(): the child is killed and reaped.
//
// The stream: meta_len:u64 meta holds_len:u64 holds end:u64, where meta is
// last_token:u64 hold_count:u64 has_rule_set:u8 [name toml].
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "core/error.h"
#include "store/store.h"
#include "store/wal/snapshot.h"

namespace holdfast::wal {

class ForkedEncoding {
 public:
  // Errors: pipe or fork failed (the caller encodes in process instead).
  static Result<ForkedEncoding> start(const StateSource& source, std::uint64_t last_token);

  ForkedEncoding(ForkedEncoding&& other) noexcept;
  ForkedEncoding& operator=(ForkedEncoding&& other) noexcept;
  ForkedEncoding(const ForkedEncoding&) = delete;
  ~ForkedEncoding();

  // Blocks until the child is done. Call once.
  Result<EncodedState> finish();

 private:
  ForkedEncoding(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
  void abandon();

  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace holdfast::wal
