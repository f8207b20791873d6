#include "torture/torture_run.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "support/eventually.h"
#include "support/postgres.h"
#include "support/server_process.h"
#include "torture/disk_faults.h"
#include "torture/fenced_resource.h"
#include "torture/history.h"
#include "torture/load.h"
#include "torture/process_faults.h"
#include "torture/report.h"
#include "torture/server_watch.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {
namespace {

using testing::ServerProcess;
using testing::TestPostgres;

std::vector<FaultKind> supported(const TortureOptions& options, const DiskFaults* disk,
                                 std::ostream& out) {
  std::vector<FaultKind> kinds;
  const bool postgres = options.backend == "postgres";
  for (FaultKind kind : kAllFaultKinds) {
    if (!options.faults.empty() &&
        std::find(options.faults.begin(), options.faults.end(), kind) == options.faults.end())
      continue;
    switch (kind) {
      case FaultKind::kKill9:
      case FaultKind::kSigstop:
      case FaultKind::kDisconnect:
        kinds.push_back(kind);
        break;
      case FaultKind::kDiskFull:
        if (postgres) break;
        if (disk->can_fill()) {
          kinds.push_back(kind);
        } else {
          out << "  skipping disk-full: " << disk->why_not_fill() << "\n";
        }
        break;
      case FaultKind::kEioWrite:
      case FaultKind::kEioSync:
      case FaultKind::kSlowSync:
        if (!postgres) kinds.push_back(kind);
        break;
      case FaultKind::kDbRestart:
        if (postgres) kinds.push_back(kind);
        break;
    }
  }
  return kinds;
}

// Waits until every key was granted after the fault ended; the slowest key's wait, or nothing
// when some key was not granted within the bound (recorded as a violation).
std::optional<std::int64_t> await_recovery(History& history, FaultKind kind,
                                           const FaultResult& fault,
                                           const std::vector<std::string>& keys,
                                           std::int64_t limit_ms) {
  const std::int64_t deadline_us = fault.end_us + limit_ms * 1000;
  std::int64_t slowest_us = 0;
  for (const std::string& key : keys) {
    std::optional<std::int64_t> at;
    while (!(at = history.first_grant_after(key, fault.end_us)) && wall_us() < deadline_us)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!at || *at > deadline_us) {
      history.violation("after " + std::string(fault_name(kind)) + ", " + key +
                        " was not granted again within " + std::to_string(limit_ms) + " ms");
      return std::nullopt;
    }
    slowest_us = std::max(slowest_us, *at - fault.end_us);
  }
  return slowest_us / 1000;
}

// Stops the server with SIGTERM, as an operator would; it must exit 0 within 10 s (then it is
// killed, and that is a violation).
void stop_server(ServerWatch& watch, History& history) {
  const pid_t pid = watch.with([](ServerProcess& s) { return s.pid(); });
  std::atomic<bool> stopped{false};
  std::atomic<bool> killed{false};
  std::thread guard([&] {
    for (int i = 0; i < 100 && !stopped; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!stopped) {
      killed = true;
      ::kill(pid, SIGKILL);
    }
  });
  const int code = watch.with([](ServerProcess& s) { return s.stop(); });
  stopped = true;
  guard.join();
  if (killed) {
    history.violation("the server did not stop within 10 s of SIGTERM");
  } else if (code != 0) {
    history.violation("the server exited with " + std::to_string(code) + " on SIGTERM");
  }
}

}  // namespace

Outcome run_torture(const TortureOptions& options, std::ostream& out) {
  const bool postgres = options.backend == "postgres";
  out << "holdfast-torture " << options.backend << ": " << options.seconds << " s, "
      << options.workers << " workers on " << options.keys << " keys, ttl " << options.ttl_ms
      << " ms, seed " << options.seed << "\n";

  std::unique_ptr<TestPostgres> database;
  std::unique_ptr<DiskFaults> disk;
  std::unique_ptr<ServerProcess> server;
  if (postgres) {
    try {
      database = std::make_unique<TestPostgres>();
    } catch (const std::exception& e) {
      out << "  skipped: " << e.what() << "\n";
      return Outcome::kSkipped;
    }
    server = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--store", testing::fresh_store_url(database->url())});
  } else {
    disk = std::make_unique<DiskFaults>();
    // Frequent snapshots roll the log to new segments, which is where a full disk bites first.
    server = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--idle-poll-us", "0", "--snapshot-after-bytes", "16384",
                                 "--fsync", options.fsync},
        disk->data_dir(), disk->server_env());
  }
  const std::vector<FaultKind> kinds = supported(options, disk.get(), out);
  ServerWatch watch(*server);

  std::vector<std::string> keys;
  for (int k = 0; k < options.keys; ++k) keys.push_back("torture:" + std::to_string(k));
  History history;
  FencedResource resource;
  Report report;
  report.backend = options.backend;
  report.recovery_bound_ms = options.ttl_ms + options.bound_ms;
  std::mt19937 rng(options.seed);
  auto load = std::make_unique<Load>(
      LoadOptions{server->port(), options.workers, keys, options.ttl_ms, 10, options.seed}, history,
      resource);

  const auto began = std::chrono::steady_clock::now();
  const auto until = began + std::chrono::seconds(options.seconds);
  std::vector<FaultKind> order = kinds;
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i = 0;
       !order.empty() && (i < order.size() || std::chrono::steady_clock::now() < until); ++i) {
    if (i > 0 && i % order.size() == 0) std::shuffle(order.begin(), order.end(), rng);
    const FaultKind kind = order[i % order.size()];
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 400));
    FaultResult fault;
    switch (kind) {
      case FaultKind::kKill9:
        fault = watch.with([&](ServerProcess& s) { return kill9_and_restart(s, rng); });
        break;
      case FaultKind::kSigstop:
        fault = watch.with(
            [&](ServerProcess& s) { return stop_and_continue(s, options.ttl_ms + 300); });
        break;
      case FaultKind::kDisconnect:
        fault = vanish_clients(server->port(), keys[rng() % keys.size()], options.ttl_ms, history);
        break;
      case FaultKind::kDiskFull:
        fault = disk->fill(*server);
        break;
      case FaultKind::kEioWrite:
        fault = disk->fail(*server, "write");
        break;
      case FaultKind::kEioSync:
        fault = disk->fail(*server, "sync");
        break;
      case FaultKind::kSlowSync:
        fault = disk->slow_sync(300, 1500);
        break;
      case FaultKind::kDbRestart:
        fault = restart_database(*database);
        break;
    }
    ++report.faults[std::string(fault_name(kind))];
    if (!fault.noticed)
      history.violation(std::string(fault_name(kind)) +
                        ": the server never reported the fault (holdfast_store_unavailable)");
    const std::optional<std::int64_t> recovered =
        await_recovery(history, kind, fault, keys, report.recovery_bound_ms);
    if (recovered) report.recovery_ms.push_back(*recovered);
    if (fault.abandoned) {
      // The key was granted again; once its new holder has written (its section is short, but
      // a machine busy with other builds may make it late), the stale write must be refused.
      // A holder whose lease ended before it wrote writes nothing: then there is nothing to
      // check.
      const std::string& key = fault.abandoned->key;
      const auto give_up = std::chrono::steady_clock::now() + testing::kEventually;
      while (resource.highest(key) <= fault.abandoned->token &&
             std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (resource.highest(key) > fault.abandoned->token &&
          resource.write(key, fault.abandoned->token).accepted)
        history.violation("a write fenced by token " + std::to_string(fault.abandoned->token) +
                          " on " + fault.abandoned->key +
                          " was accepted after its lease ended and the key was granted again");
    }
    out << "  " << fault_name(kind) << ": every key granted again "
        << (recovered ? "after " + std::to_string(*recovered) + " ms" : "too late") << "\n"
        << std::flush;
  }
  load->stop();
  stop_server(watch, history);
  report.seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - began)
          .count();
  report.grants = load->grants();
  report.errors = load->errors();
  report.fenced_accepted = resource.accepted();
  report.fenced_refused = resource.refused();
  report.findings = history.check();
  report.server_log_lines = watch.lines();
  report.server_log_tail = watch.tail();
  report.print(out);
  out << std::flush;
  return report.passed() ? Outcome::kPassed : Outcome::kFailed;
}

}  // namespace holdfast::torture
