// The mutual-exclusion workload shared by the test threads and the sql_contender processes.
//
// Every worker runs `iterations` critical sections under with_advisory_lock(name). Inside each
// it increments a shared counter without any atomicity of its own (read, yield, write back) and
// records when the section started and ended on CLOCK_MONOTONIC, which all processes of the
// machine share. The lock is correct only if the counter ends exact and no two recorded
// sections overlap.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace holdfast::sql::testing {

enum class Database { kPostgres, kMariaDb };

// Where the counter lives: a file (session mode; the database knows nothing of it), or a row
// of the table `counters(name, value)` read and written through the locked connection
// (transaction mode: the row's new value must commit while the lock is held).
enum class CounterKind { kFile, kTable };

struct Workload {
  Database database = Database::kPostgres;
  std::string postgres_url;
  int mariadb_port = 0;
  std::string lock_name;
  int iterations = 0;
  bool transaction = false;
  CounterKind counter = CounterKind::kFile;
  std::filesystem::path counter_file;  // for CounterKind::kFile
};

struct Interval {
  std::int64_t start_ns;
  std::int64_t end_ns;
};

// Runs the workload on a connection of its own; returns the recorded critical sections.
// Throws whatever with_advisory_lock throws.
std::vector<Interval> run_workload(const Workload& workload);

// The first pair of intervals that overlap, if any (REQUIRES nothing about their order).
std::optional<std::pair<Interval, Interval>> find_overlap(std::vector<Interval> intervals);

// Interval files: one "start end" line per section.
void write_intervals(const std::filesystem::path& path, const std::vector<Interval>& intervals);
std::vector<Interval> read_intervals(const std::filesystem::path& path);

// Creates the counters table (if missing) and a zero row for `name`; reads a row back.
void reset_table_counter(const Workload& workload);
std::int64_t read_table_counter(const Workload& workload);

// Command-line form of a workload for sql_contender (and its parser).
std::vector<std::string> workload_arguments(const Workload& workload,
                                            const std::filesystem::path& intervals_out);
Workload parse_workload_arguments(int argc, char** argv, std::filesystem::path* intervals_out);

}  // namespace holdfast::sql::testing
