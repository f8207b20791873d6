// ForkedEncoding: a snapshot's state encoded in a child process, so that the loop thread
// pauses only for fork() instead of for the whole encoding (docs/wal-format.md, section 6).
//
//  1. start() (loop thread): pipe, fork. The child is a copy-on-write image of the process at
//     that instant, so the state source sees the table exactly as it is at the cut. The child
//     dies with the thread that forked it (PR_SET_PDEATHSIG: a kill -9 of the server ends it
//     too), closes every descriptor but stdio and the pipe (the data dir's lock among them),
//     runs the source twice (a SnapshotCounter for the head, which names the hold count
//     first; then a SnapshotEncoder whose holds it sends on every 1 MiB), and _exit()s, also
//     when the source throws. Neither side ever holds more than a piece of the encoded holds,
//     so the source must hand over the same state both times (it must not depend on the
//     clock). It touches nothing else (no file system, no lock another thread may have held).
//  2. The snapshot writer thread reads it as a StateStream: head(), the holds a piece at a
//     time straight into the snapshot file, then finish() checks the end of the stream and
//     reaps the child. Any of them answers an error if the child failed or the stream is
//     incomplete; failed() then tells the writer the fault was the child's, not the file
//     system's.
//  3. Destroyed before finish(): the child is killed and reaped.
//
// The stream: meta_len:u64 meta (piece_len:u64 piece)* 0:u64 end:u64, where meta is
// last_token:u64 hold_count:u64 value_count:u64 has_rule_set:u8 [name toml] and the pieces,
// in order, are the holds' records and then the typed values'. A child whose two passes count
// different holds or values fails.
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

  // StateStream, in order: head(), holds() until it answers the empty piece, finish().
  Result<EncodedState> head() override;
  Result<std::string_view> holds() override;
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
  bool holds_done_ = false;  // holds() answered the empty piece
  std::string buffer_;       // the piece holds() answers
};

}  // namespace holdfast::wal
