// The benchmark suite: which targets and workloads run, in which order, with which shapes,
// and everything they produced.
//
// Order of a run:
//   1. start every selected target once, each in its own sub-folder of one mkdtemp folder;
//      a target that fails to start is reported and left out;
//   2. for each streaming workload (f, a, c, b), for each connection count, measure every
//      target back to back, so that the figures a ratio compares are taken minutes apart at
//      most (the host's speed drifts over minutes; within one run it is what ratios cancel);
//   3. stop those servers, then run the capacity workloads (d, e) each on a fresh server;
//   4. hand the results to the report.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "capacity.h"
#include "fanout.h"
#include "handoff.h"
#include "idle.h"
#include "measurement.h"

namespace holdfast::bench {

struct SuiteOptions {
  std::vector<std::string> targets;       // names, see all_target_names() and "holdfast-pg"
  std::vector<int> pg_nodes = {1, 2, 3};  // "holdfast-pg" runs one target per node count
  int pg_commit_lanes = -1;               // holdfast-pg's [store] commitLanes; -1: its default
  std::vector<std::string> workloads;     // names, see all_workload_names()
  std::vector<int> connections = {1, 16, 64};
  // (g) the pairs of (a) with a client that sleeps as soon as it has nothing to do, as client
  // libraries do: throughput and server CPU per pair against the peers at each count.
  std::vector<int> sleeping_connections = {1, 8, 16, 64};
  // (j) the pairs of (a) over TLS (holdfast-never-tls, redis-tls) beside the same servers over
  // plain TCP (holdfast-never, redis), at each count.
  std::vector<int> tls_connections = {64};
  IdleShape idle;         // (h)
  double duration_s = 5;  // per figure, split over `rounds` windows
  double warmup_s = 1;    // per figure, split likewise
  int rounds = 3;
  std::uint64_t keys = 10'000;
  int hot_connections = 64;            // (b) and (i)
  int writer_every = 8;                // (i): one connection in this many is a writer
  std::int64_t semaphore_permits = 8;  // (i): the semaphore's permits
  int depth = 16;
  // (k) pairs at `watch_connections` connections with no watcher and with `watchers`.
  int watchers = 10;
  int watch_connections = 64;
  // (l) PUBLISH to `subscribers` subscribers, `publish_depth` in flight.
  int subscribers = 100;
  int publish_depth = 16;
  // (n) hand-offs measured per target and path, one at a time.
  int handoffs = 100;
  std::int64_t think_us = 1000;
  std::int64_t client_poll_us = 100;     // the load generator's poll window, every target alike
  std::int64_t backoff_min_us = 1000;    // (b) retry loops: first back-off ...
  std::int64_t backoff_max_us = 32'000;  // ... doubling up to this
  std::uint64_t memory_holds = 1'000'000;
  std::uint64_t restart_holds = 1'000'000;
  std::string restart_fsync = "never";  // always, never or horizon
  std::filesystem::path holdfast_binary;
  std::vector<std::string> holdfast_args;
  std::filesystem::path scripts_dir;
  bool keep_data = false;
  bool smoke = false;
};

// Every target and workload name, in report order. "all" means these; the scale-out target
// "holdfast-pg" (N nodes over one PostgreSQL, for each N of --pg-nodes) runs only when named.
const std::vector<std::string>& all_target_names();
// holdfast-sem-*, redis-sem*: redis-semaphore's Semaphore recipe, in (a) and (d) only.
bool is_semaphore_target(const std::string& name);
inline constexpr char kScaleOutTarget[] = "holdfast-pg";
// The concrete targets of a run, in report order: the selected names of all_target_names(),
// then holdfast-pg<N> for each N of pg_nodes when "holdfast-pg" is selected.
std::vector<std::string> run_target_names(const SuiteOptions& options);
const std::vector<std::string>& all_workload_names();
// Maps the letters (a-f) to workload names; names pass through. "" if unknown.
std::string workload_name(const std::string& name_or_letter);

struct TargetInfo {
  std::string name;
  std::string description;
  std::string failure;  // non-empty: it did not start
};

struct SuiteResults {
  SuiteOptions options;
  std::vector<TargetInfo> targets;
  std::vector<Measurement> measurements;
  std::vector<MemoryResult> memory;
  std::vector<RestartResult> restarts;
  std::vector<IdleResult> idle;
  std::vector<PublishResult> publish;   // (k)
  std::vector<HandoffResult> handoffs;  // (n)
  double wall_seconds = 0;
  bool interrupted = false;
};

SuiteResults run_suite(const SuiteOptions& options);

// The smoke test's verdict: every target started, every measurement ran and produced
// well-formed figures without errors, no mutual-exclusion violation. Returns the problems.
std::vector<std::string> smoke_problems(const SuiteResults& results);

}  // namespace holdfast::bench
