// The mutual-exclusion scenario run against each database: N threads of this test process
// and M sql_contender child processes run the same workload (contention.h) at once.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "contention.h"

namespace holdfast::sql::testing {

struct ScenarioResult {
  std::vector<Interval> intervals;    // every critical section of every worker
  std::int64_t counter = 0;           // the shared counter at the end
  std::vector<std::string> failures;  // errors of threads or children (empty when all ran)
};

// Runs `threads` threads and `processes` children, each doing workload.iterations sections.
// The counter (file or table) starts at zero. Children are found at HOLDFAST_SQL_CONTENDER.
ScenarioResult run_threads_and_processes(Workload workload, int threads, int processes);

}  // namespace holdfast::sql::testing
