// Threads plus child processes contending for one name; see exclusion_scenario.h.
#include "exclusion_scenario.h"

#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <thread>

extern char** environ;

namespace holdfast::sql::testing {
namespace {

pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

}  // namespace

ScenarioResult run_threads_and_processes(Workload workload, int threads, int processes) {
  ScenarioResult result;
  std::string pattern = "/tmp/holdfast-sql-scenario-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    result.failures.push_back("mkdtemp failed");
    return result;
  }
  const std::filesystem::path dir = pattern;
  if (workload.counter == CounterKind::kFile) {
    workload.counter_file = dir / "counter";
    std::ofstream(workload.counter_file) << 0 << '\n';
  } else {
    reset_table_counter(workload);
  }

  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    std::vector<std::string> args{HOLDFAST_SQL_CONTENDER};
    for (std::string& a : workload_arguments(workload, dir / ("child-" + std::to_string(p)))) {
      args.push_back(std::move(a));
    }
    const pid_t pid = spawn(args);
    if (pid < 0) result.failures.push_back("cannot start " + args[0]);
    children.push_back(pid);
  }

  std::mutex mu;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      try {
        std::vector<Interval> mine = run_workload(workload);
        std::lock_guard lock(mu);
        result.intervals.insert(result.intervals.end(), mine.begin(), mine.end());
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        result.failures.push_back(std::string("thread: ") + e.what());
      }
    });
  }
  for (std::thread& w : workers) w.join();

  for (int p = 0; p < processes; ++p) {
    if (children[p] < 0) continue;
    int status = 0;
    waitpid(children[p], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      result.failures.push_back("child " + std::to_string(p) + " failed (status " +
                                std::to_string(status) + ")");
    }
    const auto theirs = read_intervals(dir / ("child-" + std::to_string(p)));
    result.intervals.insert(result.intervals.end(), theirs.begin(), theirs.end());
  }

  if (workload.counter == CounterKind::kFile) {
    std::ifstream(workload.counter_file) >> result.counter;
  } else {
    result.counter = read_table_counter(workload);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}

}  // namespace holdfast::sql::testing
