// ForkedEncoding: a snapshot's state encoded in a child process, so that the loop thread
// pauses only for fork() instead of for the whole encoding (docs/wal-format.md, section 6).
//
//  1. start() (loop thread): pipe, fork. The child is a copy-on-write image of the process at
//     that instant, so the state source sees the table exactly as it is at the cut. The child
//     dies with the thread that forked it (PR_SET_PDEATHSIG: a kill -9 of the server ends it
//     too), closes every descriptor but stdio and the pipe (the data dir's lock among them),
//     runs the source into a SnapshotEncoder, writes the EncodedState to the pipe and
//     _exit()s, also when the source throws. It touches nothing else (no file system, no
//     lock another thread may have held).
//  2. The snapshot writer thread reads it as a StateStream: head(), the holds a chunk at a
//     time straight into the snapshot file (the parent never holds the encoded state whole),
//     then finish() checks the end of the stream and reaps the child. Any of them answers an
//     error if the child failed or the stream is incomplete; failed() then tells the writer
//     the fault was the child's, not the file system's.
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

class ForkedEncoding final : public StateStream {
 public:
  // Errors: pipe or fork failed (the caller encodes in process instead).
  static Result<ForkedEncoding> start(const StateSource& source, std::uint64_t last_token);

  ForkedEncoding(ForkedEncoding&& other) noexcept;
  ForkedEncoding& operator=(ForkedEncoding&& other) noexcept;
  ForkedEncoding(const ForkedEncoding&) = delete;
  ~ForkedEncoding() override;

  // StateStream, each called once and in order (holds() until every byte is read).
  Result<EncodedState> head(std::uint64_t& holds_bytes) override;
  Result<std::string_view> holds(std::size_t size) override;
  Status finish() override;

  // One of the above failed: the child died or its stream was damaged.
  bool failed() const { return failed_; }

 private:
  ForkedEncoding(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
  void abandon();
  // Ends the child (reaped; killed if `damaged`) and answers why the stream failed: the
  // child's exit status if it failed, else `what`.
  Error fail(std::string what, bool damaged);
  // Reaps the child; an error unless it exited with status 0.
  Status reap();

  int fd_ = -1;
  pid_t pid_ = -1;
  bool failed_ = false;
  std::uint64_t holds_left_ = 0;
  std::string buffer_;  // the chunk holds() answers
};

}  // namespace holdfast::wal
