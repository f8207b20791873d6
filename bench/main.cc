// holdfast-bench: runs the benchmark workloads against Holdfast and its peers (Redis,
// PostgreSQL advisory locks, etcd), each started here on loopback, and writes the report.
//
//   holdfast-bench --out bench/results                 the full run (about 5 minutes)
//   holdfast-bench --smoke --out /tmp/x                 every target and workload, tiny (CI)
//   holdfast-bench --targets redis,holdfast-never --workloads a,f --duration 2
//   holdfast-bench --targets postgres,holdfast-pg --pg-nodes 1,2,3 --workloads a --connections 64
//
// Exit status: 0 when every target started and every figure was produced without errors or
// mutual-exclusion violations; 1 otherwise (the report is written either way); 2 on bad flags.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "options.h"
#include "process.h"
#include "report.h"
#include "suite.h"

#ifndef HOLDFAST_SOURCE_DIR
#define HOLDFAST_SOURCE_DIR "."
#endif

namespace {

using holdfast::bench::SuiteOptions;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::filesystem::path self_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

}  // namespace

int main(int argc, char** argv) {
  namespace hb = holdfast::bench;
  CLI::App app{"holdfast-bench: Holdfast against Redis, PostgreSQL and etcd, same run, ratios"};
  std::string out_dir = "bench/results";
  std::string targets = "all";
  std::string workloads = "all";
  std::string connections = "1,16,64";
  std::string sleeping_connections = "1,8,16,64";
  std::string tls_connections = "64";
  SuiteOptions o;
  std::string holdfast_binary = (self_dir() / "holdfast").string();
  std::string scripts_dir = std::string(HOLDFAST_SOURCE_DIR) + "/scripts";
  std::string restart_fsync = "never";
  std::string date;

  app.add_option("--out", out_dir, "Folder for <date>.md and the charts")->capture_default_str();
  app.add_option("--duration", o.duration_s, "Seconds per measurement")->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "Unrecorded seconds before each measurement")
      ->capture_default_str();
  app.add_option("--rounds", o.rounds,
                 "Windows per figure, interleaved across targets so all see the same drift")
      ->capture_default_str();
  app.add_option(
         "--targets", targets,
         "Comma list of holdfast-always,holdfast-never,holdfast-horizon,holdfast-redis-always,"
         "holdfast-redis-never,holdfast-never-tls,"
         "redis,redis-aof,redis-tls,holdfast-sem-always,holdfast-sem-never,redis-sem,redis-sem-aof,"
         "postgres,etcd "
         "(or all), and holdfast-pg (scale-out nodes over PostgreSQL; not in all)")
      ->capture_default_str();
  std::string pg_nodes = "1,2,3";
  app.add_option("--pg-commit-lanes", o.pg_commit_lanes,
                 "holdfast-pg's [store] commitLanes (0: no group commit); -1: the node's default")
      ->check(CLI::Range(-1, 64))
      ->capture_default_str();
  app.add_option("--pg-nodes", pg_nodes, "Node counts of holdfast-pg: one target per count")
      ->capture_default_str();
  app.add_option(
         "--workloads", workloads,
         "Comma list of floor,pairs,pipeline,hotkey,kinds,sleeping,library,idle,tls,watchers,"
         "publish,handoff,memory,restart or their letters f,a,c,b,i,g,m,h,j,k,l,n,d,e (or all)")
      ->capture_default_str();
  app.add_option("--connections", connections, "Connection counts of (a), (c) and (f)")
      ->capture_default_str();
  app.add_option("--sleeping-connections", sleeping_connections,
                 "Connection counts of (g), the pairs of (a) with a client that sleeps at once")
      ->capture_default_str();
  app.add_option("--tls-connections", tls_connections,
                 "Connection counts of (j), the pairs of (a) over TLS beside plain TCP")
      ->capture_default_str();
  app.add_option("--idle-connections", o.idle.connections, "Idle connections of (h)")
      ->check(CLI::Range(0, 10'000))
      ->capture_default_str();
  app.add_option("--idle-holds", o.idle.holds, "Holds loaded before the idle window of (h)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--idle-seconds", o.idle.idle_s, "Seconds of the idle window of (h)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--paced-seconds", o.idle.paced_s,
                 "Seconds of the paced window of (h): one pair every 10 ms")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--paced-windows", o.idle.paced_windows,
                 "Windows the paced window of (h) is taken in, alternating across the targets")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--keys", o.keys, "Keys of workload (a)")->capture_default_str();
  app.add_option("--hot-connections", o.hot_connections, "Connections of workloads (b) and (i)")
      ->capture_default_str();
  app.add_option("--writer-every", o.writer_every,
                 "In (i), one connection in this many is a writer, the others readers")
      ->capture_default_str();
  app.add_option("--semaphore-permits", o.semaphore_permits,
                 "Permits of the semaphore of (i); each connection takes one")
      ->capture_default_str();
  app.add_option("--depth", o.depth, "Pipeline depth of workload (c)")->capture_default_str();
  app.add_option("--watchers", o.watchers, "LOCK.WATCH connections of (k)")->capture_default_str();
  app.add_option("--watch-connections", o.watch_connections, "Pair connections of (k)")
      ->capture_default_str();
  app.add_option("--subscribers", o.subscribers, "Subscribers of (l)")->capture_default_str();
  app.add_option("--publish-depth", o.publish_depth, "PUBLISHes in flight in (l)")
      ->capture_default_str();
  app.add_option("--handoffs", o.handoffs, "Hand-offs of (n) per target and path, one at a time")
      ->capture_default_str();
  app.add_option("--think-us", o.think_us, "Pause after each critical section in (b), µs")
      ->capture_default_str();
  app.add_option("--client-poll-us", o.client_poll_us,
                 "How long the client's loop may poll before it sleeps, adapting like the "
                 "server's --idle-poll-us; 0 sleeps at once")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{10'000}))
      ->capture_default_str();
  app.add_option("--backoff-min-us", o.backoff_min_us,
                 "First back-off of a retry-loop worker in (b), µs (doubles after each busy try)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--backoff-max-us", o.backoff_max_us,
                 "Largest back-off of a retry-loop worker in (b), µs")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--memory-holds", o.memory_holds, "Holds loaded in (d)")->capture_default_str();
  app.add_option("--restart-holds", o.restart_holds, "Holds loaded in (e)")->capture_default_str();
  app.add_option("--restart-fsync", restart_fsync, "Holdfast --fsync mode of (e)")
      ->check(CLI::IsMember({"always", "never", "horizon"}))
      ->capture_default_str();
  app.add_option("--holdfast", holdfast_binary, "The holdfast binary")->capture_default_str();
  app.add_option("--holdfast-arg", o.holdfast_args, "Extra argument for holdfast serve (repeat)");
  app.add_option("--scripts-dir", scripts_dir, "Folder with start-postgres.sh")
      ->capture_default_str();
  app.add_option("--date", date, "Report name instead of today's date");
  app.add_flag("--keep-data", o.keep_data, "Keep the servers' temporary folders");
  app.add_flag("--smoke", o.smoke,
               "A few seconds in all: every target starts, figures parse, mutual exclusion "
               "holds; exit 1 otherwise");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);  // prints the help, or the error
    return status == 0 ? 0 : 2;      // --help is not an error; every bad flag is status 2
  }

  o.targets = targets == "all" ? hb::all_target_names() : hb::split(targets);
  for (const auto& t : o.targets) {
    if (t != hb::kScaleOutTarget &&
        std::find(hb::all_target_names().begin(), hb::all_target_names().end(), t) ==
            hb::all_target_names().end()) {
      std::fprintf(stderr, "unknown target '%s' (--targets takes %s, holdfast-pg or all)\n",
                   t.c_str(), join(hb::all_target_names()).c_str());
      return 2;
    }
  }
  o.workloads.clear();
  for (const auto& w : workloads == "all" ? hb::all_workload_names() : hb::split(workloads)) {
    const std::string name = hb::workload_name(w);
    if (name.empty()) {
      std::fprintf(stderr, "unknown workload '%s' (--workloads takes %s, the letters a-h or all)\n",
                   w.c_str(), join(hb::all_workload_names()).c_str());
      return 2;
    }
    o.workloads.push_back(name);
  }
  if (o.targets.empty() || o.workloads.empty()) {
    std::fprintf(stderr, "%s\n",
                 o.targets.empty() ? "--targets needs at least one target"
                                   : "--workloads needs at least one workload");
    return 2;
  }
  std::string problem = hb::parse_counts("--connections", connections, 1, 4096, o.connections);
  if (problem.empty())
    problem = hb::parse_counts("--sleeping-connections", sleeping_connections, 1, 4096,
                               o.sleeping_connections);
  if (problem.empty())
    problem = hb::parse_counts("--tls-connections", tls_connections, 1, 4096, o.tls_connections);
  if (problem.empty()) problem = hb::parse_counts("--pg-nodes", pg_nodes, 1, 16, o.pg_nodes);
  if (problem.empty()) problem = hb::check_options(o);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    return 2;
  }
  std::sort(o.connections.begin(), o.connections.end());
  o.holdfast_binary = holdfast_binary;
  o.scripts_dir = scripts_dir;
  o.restart_fsync = restart_fsync;
  if (o.smoke) {
    // Small enough for `make test`, large enough to exercise every code path: contention on
    // the hot key, pipelines, reloading holds after a crash. Restarting with --fsync always
    // makes "every sampled hold survived" a contract the smoke test may insist on.
    o.duration_s = 0.3;
    o.warmup_s = 0.1;
    o.rounds = 1;
    o.connections = {2};
    o.sleeping_connections = {2};
    o.tls_connections = {2};
    o.idle = {20, 2000, 0.3, 0.3, 10, 1};
    o.hot_connections = 8;
    o.watchers = 2;
    o.watch_connections = 2;
    o.subscribers = 4;
    o.handoffs = 5;
    o.memory_holds = 2000;
    o.restart_holds = 2000;
    o.restart_fsync = "always";
  }

  hb::install_signal_handlers();
  const hb::SuiteResults results = hb::run_suite(o);
  int status = 0;
  try {
    const hb::ReportFiles files =
        hb::write_report(results, out_dir, date.empty() ? hb::today() : date);
    std::fprintf(stderr, "report: %s\n", files.markdown.c_str());
    if (!files.chart_error.empty()) {
      std::fprintf(stderr, "charts not drawn: %s\n", files.chart_error.c_str());
      if (o.smoke) status = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "report failed: %s\n", e.what());
    status = 1;
  }
  const std::vector<std::string> problems = hb::smoke_problems(results);
  for (const auto& p : problems) std::fprintf(stderr, "FAIL: %s\n", p.c_str());
  if (!problems.empty()) status = 1;
  if (status == 0) std::fprintf(stderr, "ok: every target ran, no errors, mutual exclusion held\n");
  return status;
}
