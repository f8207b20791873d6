// The file operations the store needs, behind an interface so that crash cases (torn writes,
// lost unsynced data, a sync that blocks) run in tests without a disk. Two implementations:
// PosixFileSystem (posix_file_system.h) and FakeFileSystem (fake_file_system.h).
//
// Paths are plain strings (dir + "/" + name). Every operation reports failure through
// Result/Status with the path and the errno text in the message; none throws.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace holdfast::wal {

// A file open for appending. Used by one thread at a time.
class WritableFile {
 public:
  virtual ~WritableFile() = default;

  // Appends the pieces in order, as one gathered write where possible (writev). On error some
  // prefix of the data may have reached the file.
  virtual Status append(std::span<const std::string_view> pieces) = 0;

  // Makes everything appended so far durable (fdatasync).
  virtual Status sync() = 0;

  // Makes the file's first `bytes` bytes real, zero-filled blocks (zeros are written after
  // whatever the file holds), so that later appends inside them overwrite allocated blocks:
  // their sync then has data to write and no size or extent change to commit. Appends still go
  // on from the end of what was appended. The zeros become durable with the next sync.
  virtual Status preallocate(std::uint64_t bytes) = 0;

  // Cuts the file at the end of what was appended, dropping unused reserved space.
  virtual Status truncate_to_appended() = 0;

  // Closes the file; further calls are errors. Idempotent. The destructor closes too.
  virtual Status close() = 0;
};

// The bytes of a whole file, read-only. The POSIX file system maps the file (no copy: a
// million-hold snapshot is read at page-cache speed); the fake hands out a string. Valid as
// long as this object lives, and as long as nobody shrinks the file meanwhile (the data dir
// lock sees to that).
class FileContents {
 public:
  FileContents() = default;
  explicit FileContents(std::string bytes) : owned_(std::move(bytes)) {}
  // Bytes that live elsewhere (a mapping); destroying the last copy of `keeper` releases them.
  FileContents(std::string_view bytes, std::shared_ptr<const void> keeper)
      : borrowed_(bytes), keeper_(std::move(keeper)) {}

  std::string_view data() const { return keeper_ ? borrowed_ : std::string_view(owned_); }

 private:
  std::string owned_;
  std::string_view borrowed_;
  std::shared_ptr<const void> keeper_;
};

// An exclusive lock on a file, released when this object is destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// The outcome of lock_file: the lock, or (lock null) the pid of the process that holds it.
struct LockAttempt {
  std::unique_ptr<FileLock> lock;
  std::int64_t holder_pid = 0;  // 0: unknown
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Creates the directory if it does not exist (its parent must).
  virtual Status create_dir(const std::string& dir) = 0;

  // The names (not paths) of the entries of dir, in no particular order.
  virtual Result<std::vector<std::string>> list_dir(const std::string& dir) = 0;

  // The whole contents of a file.
  virtual Result<FileContents> read_file(const std::string& path) = 0;

  // Creates (or empties) a file and opens it for appending.
  virtual Result<std::unique_ptr<WritableFile>> create_file(const std::string& path) = 0;

  // Cuts a file to `size` bytes and makes that durable.
  virtual Status truncate_file(const std::string& path, std::uint64_t size) = 0;

  // Atomically replaces `to` by `from`.
  virtual Status rename_file(const std::string& from, const std::string& to) = 0;

  virtual Status remove_file(const std::string& path) = 0;

  // Makes creations, renames and removals of entries in dir durable (fsync on the directory).
  virtual Status sync_dir(const std::string& dir) = 0;

  // Takes an exclusive lock on path (creating the file) without waiting, and on success writes
  // this process's pid into it. Error only for I/O failures; contention is a LockAttempt
  // without a lock.
  virtual Result<LockAttempt> lock_file(const std::string& path) = 0;
};

// The real one, shared by every store of the process.
FileSystem& posix_file_system();

}  // namespace holdfast::wal
