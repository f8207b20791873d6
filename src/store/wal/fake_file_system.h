// An in-memory FileSystem for tests: crash cases without a disk.
//
// Each file remembers how much of it has been synced, so drop_unsynced() can play a power
// loss; tests edit bytes directly (contents/set_contents) to play torn writes and bit flips.
// A sync can be held on a latch (block_syncs / unblock_syncs) so a test can pile appends up
// behind a sync in progress, and I/O errors can be injected. Thread-safe: the store's syncer
// thread and the test thread use it at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "store/wal/file_system.h"

namespace holdfast::wal {

class FakeFileSystem final : public FileSystem {
 public:
  FakeFileSystem() = default;
  FakeFileSystem(const FakeFileSystem&) = delete;
  FakeFileSystem& operator=(const FakeFileSystem&) = delete;

  // --- FileSystem ---
  Status create_dir(const std::string& dir) override;
  Result<std::vector<std::string>> list_dir(const std::string& dir) override;
  Result<FileContents> read_file(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> create_file(const std::string& path) override;
  Status truncate_file(const std::string& path, std::uint64_t size) override;
  Status rename_file(const std::string& from, const std::string& to) override;
  Status remove_file(const std::string& path) override;
  Status sync_dir(const std::string& dir) override;
  Result<LockAttempt> lock_file(const std::string& path) override;

  // --- inspection and damage ---
  // A file's bytes as a reader sees them (preallocated space included, as zeros).
  std::optional<std::string> contents(const std::string& path) const;
  // Replaces a file's bytes, as if they were on disk (synced; nothing reserved beyond them).
  // Creates the file if needed.
  void set_contents(const std::string& path, std::string data);
  bool exists(const std::string& path) const;
  // A power loss: every file goes back to what its last sync made durable.
  void drop_unsynced();

  enum class Crash : std::uint8_t {
    kKill,       // kill -9: everything written survives (it is in the page cache)
    kPowerLoss,  // only what was synced survives
  };
  // The disk as a new process would find it after `crash`, while this one (and a store using
  // it) goes on untouched. Locks are not copied: they die with the crashed process.
  std::unique_ptr<FakeFileSystem> image_after(Crash crash) const;

  // --- syncs ---
  // While blocked, every WritableFile::sync waits (after counting itself as blocked); with a
  // suffix, only syncs of files whose path ends with it (".snap.tmp": snapshot writes).
  void block_syncs(std::string path_suffix = {});
  void unblock_syncs();
  // Waits until at least n syncs are waiting on the latch; false after `timeout`.
  bool wait_for_blocked_syncs(int n, std::chrono::milliseconds timeout);
  // Every WritableFile::sync sleeps this long (a slow disk).
  void set_sync_delay(std::chrono::microseconds delay);
  std::uint64_t file_syncs() const;
  // The thread that made the last append that wrote something (the loop or the syncer).
  std::thread::id last_append_thread() const;

  // --- injected failures (sticky until cleared) ---
  // A failing sync makes nothing durable, and, as Linux may after a failed fdatasync, the
  // bytes it was to make durable never become durable through that file: a later sync that
  // succeeds leaves them out of what drop_unsynced() and image_after(kPowerLoss) keep, until
  // the file is cut back (truncate_file) or created anew.
  void fail_syncs(bool fail);
  // A failing append writes nothing; with `torn`, the first half of its bytes (a full disk
  // mid-write).
  void fail_writes(bool fail, bool torn = false);

 private:
  struct File {
    std::string data;        // what was appended (or set)
    std::size_t synced = 0;  // bytes of data that survive drop_unsynced()
    // Bytes from here on never become durable (a sync failed); npos: none.
    std::size_t lost_from = std::string::npos;
    // Preallocated size: the file reads as data followed by zeros up to here. Kept by crashes
    // (a simplification: the zeros are written before the frames they precede and synced with
    // them, so a crash that loses them loses those frames too, which tests play by hand).
    std::size_t reserved = 0;
    std::string visible() const;
  };
  class Writable;
  class Lock;

  Status append_to(const std::string& path, std::span<const std::string_view> pieces);
  Status sync_file(const std::string& path);
  Status reserve(const std::string& path, std::uint64_t bytes, bool cut_to_data);
  void unlock(const std::string& path);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, File> files_;
  std::set<std::string> dirs_;
  std::set<std::string> locked_;
  bool syncs_blocked_ = false;
  std::string blocked_suffix_;
  int blocked_syncs_ = 0;
  std::chrono::microseconds sync_delay_{0};
  std::uint64_t file_syncs_ = 0;
  std::thread::id last_append_thread_;
  bool fail_syncs_ = false;
  bool fail_writes_ = false;
  bool torn_writes_ = false;
};

}  // namespace holdfast::wal
