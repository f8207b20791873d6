// wal-snapshot-stall: how long commits wait while a snapshot of N live holds is taken.
//
//   wal-snapshot-stall [N=1000000] [SNAPSHOTS=2] [child|loop]
//
// Opens a WalStore with --fsync always semantics on the real file system in a fresh temporary
// data dir, with a state source of N lease holds and a 1 MiB snapshot threshold, then plays one
// client that appends a grant and waits until it is durable, again and again, until SNAPSHOTS
// snapshots are complete. Prints the slowest append (the snapshot's encoding, which the loop
// thread does), the slowest commit after its append returned (what the syncer and the snapshot
// writer cost the client), and the median, and how far the process's resident size rose above
// where it stood before the first append (the snapshots' memory), and with `child` the
// largest encoder child's peak resident size; removes the directory. `child` (the server's
// way) encodes snapshots in a forked child; `loop` on the appending thread.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "store/wal/wal_store.h"
#include "tool_support.h"

namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t holds = argc > 1 ? std::stoull(argv[1]) : 1'000'000;
  const std::uint64_t snapshots = argc > 2 ? std::stoull(argv[2]) : 2;
  const bool in_child = argc <= 3 || std::string(argv[3]) != "loop";

  const std::optional<std::string> made = holdfast::wal::tools::make_temp_dir("holdfast-stall");
  if (!made) return 1;
  const std::string dir = *made;
  holdfast::SystemClock clock;
  const holdfast::Millis now = clock.now_ms();
  const holdfast::DurableState state = holdfast::wal::tools::make_state(holds, now);

  holdfast::wal::WalOptions options;
  options.data_dir = dir;
  options.fsync = holdfast::wal::FsyncMode::kAlways;
  options.snapshot_threshold_bytes = 1 << 20;
  options.encode_snapshots_in_child = in_child;
  holdfast::wal::WalStore store(options, clock);
  if (auto r = store.recover(); !r) {
    std::fprintf(stderr, "recover: %s\n", r.error().message.c_str());
    return 1;
  }
  store.set_state_source([&](holdfast::StateSink& sink) { holdfast::hand_over(state, sink); });

  namespace tools = holdfast::wal::tools;
  tools::reset_peak_rss();
  const std::uint64_t start_kb = tools::proc_status_kb("VmRSS");
  std::vector<double> commit_ms;  // append returned -> durable
  double slowest_append_ms = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  std::uint64_t token = holds;
  while (store.stats().snapshots < snapshots && Clock::now() < deadline) {
    holdfast::HoldState h = holdfast::wal::tools::make_hold(token % holds, now);
    h.token = ++token;
    const auto start = Clock::now();
    const std::uint64_t sequence = store.append(holdfast::Granted{std::move(h)});
    store.submit();
    const auto appended = Clock::now();
    while (store.durable_sequence() < sequence) std::this_thread::yield();
    slowest_append_ms = std::max(slowest_append_ms, Ms(appended - start).count());
    commit_ms.push_back(Ms(Clock::now() - appended).count());
  }
  const std::uint64_t done = store.stats().snapshots;
  const std::uint64_t peak_kb = tools::proc_status_kb("VmHWM");
  store.close();
  std::filesystem::remove_all(dir);
  if (done < snapshots || commit_ms.empty()) {
    std::fprintf(stderr, "only %llu snapshots in 60 s\n", static_cast<unsigned long long>(done));
    return 1;
  }
  std::sort(commit_ms.begin(), commit_ms.end());
  std::printf("holds: %llu  snapshots: %llu  commits: %zu\n",
              static_cast<unsigned long long>(holds), static_cast<unsigned long long>(done),
              commit_ms.size());
  std::printf("slowest append (%s): %.1f ms\n",
              in_child ? "forking the snapshot's encoder" : "encoding the snapshot in place",
              slowest_append_ms);
  std::printf("commit after append: median %.3f ms, slowest %.1f ms\n",
              commit_ms[commit_ms.size() / 2], commit_ms.back());
  std::printf("resident size: %.1f MiB before, peak %.1f MiB above it\n", start_kb / 1024.0,
              (static_cast<double>(peak_kb) - static_cast<double>(start_kb)) / 1024.0);
  if (in_child) {
    rusage children{};
    ::getrusage(RUSAGE_CHILDREN, &children);  // the encoder children, reaped by the store
    std::printf("largest encoder child: peak resident size %.1f MiB (the table's pages count)\n",
                static_cast<double>(children.ru_maxrss) / 1024.0);
  }
  return 0;
}
