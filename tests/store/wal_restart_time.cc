// wal-restart-time: how long a restart takes with N live holds.
//
//   wal-restart-time [N=1000000] [TAIL=10000]
//
// Writes a snapshot of N lease holds (realistic key and principal lengths) into a fresh
// temporary data dir, appends TAIL more changes to the log after it, then times
// WalStore::recover() on the real file system (the snapshot is then in the page cache, as it
// would be after a process restart; a cold cache adds the time to read it from the disk).
// Prints the figures and removes the directory.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "core/clock.h"
#include "store/wal/data_dir.h"
#include "store/wal/snapshot.h"
#include "store/wal/wal_store.h"
#include "tool_support.h"

namespace {

using holdfast::DurableState;
using holdfast::wal::tools::make_hold;
using Seconds = std::chrono::duration<double>;

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t holds = argc > 1 ? std::stoull(argv[1]) : 1'000'000;
  const std::uint64_t tail = argc > 2 ? std::stoull(argv[2]) : 10'000;

  const std::optional<std::string> made = holdfast::wal::tools::make_temp_dir("holdfast-restart");
  if (!made) return 1;
  const std::string dir = *made;
  holdfast::SystemClock clock;
  holdfast::wal::FileSystem& fs = holdfast::wal::posix_file_system();
  const holdfast::Millis now = clock.now_ms();

  DurableState state = holdfast::wal::tools::make_state(holds, now);
  auto start = std::chrono::steady_clock::now();
  if (auto s = holdfast::wal::write_snapshot(fs, dir, 1, state); !s) {
    std::fprintf(stderr, "write_snapshot: %s\n", s.error().message.c_str());
    return 1;
  }
  const Seconds write_time = std::chrono::steady_clock::now() - start;
  const auto snapshot_bytes = std::filesystem::file_size(
      holdfast::wal::join_path(dir, holdfast::wal::snapshot_file_name(1)));
  state = DurableState{};

  holdfast::wal::WalOptions options;
  options.data_dir = dir;
  {
    holdfast::wal::WalStore store(options, clock, fs);
    if (auto r = store.recover(); !r) {
      std::fprintf(stderr, "recover: %s\n", r.error().message.c_str());
      return 1;
    }
    std::uint64_t last = 0;
    for (std::uint64_t i = 0; i < tail; ++i) {
      holdfast::HoldState h = make_hold(i % holds, now);
      h.token = holds + i + 1;
      last = store.append(holdfast::Granted{std::move(h)});
    }
    store.submit();  // as the event loop does after each piece of work
    while (store.durable_sequence() < last) std::this_thread::yield();
  }

  holdfast::wal::WalStore store(options, clock, fs);
  start = std::chrono::steady_clock::now();
  auto recovered = store.recover();
  const Seconds recover_time = std::chrono::steady_clock::now() - start;
  if (!recovered) {
    std::fprintf(stderr, "recover: %s\n", recovered.error().message.c_str());
    return 1;
  }
  std::printf("holds: %llu  log tail: %llu records\n", static_cast<unsigned long long>(holds),
              static_cast<unsigned long long>(tail));
  std::printf("snapshot: %.1f MiB, written in %.3f s\n", snapshot_bytes / 1048576.0,
              write_time.count());
  std::printf("recover(): %.3f s, %zu live holds, last token %llu\n", recover_time.count(),
              recovered->holds.size(), static_cast<unsigned long long>(recovered->last_token));
  store.close();
  std::filesystem::remove_all(dir);
  return recovered->holds.size() == holds ? 0 : 1;
}
