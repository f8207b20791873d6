// A child process of the mutual-exclusion tests: runs one workload (contention.h) against the
// servers the parent test started and writes its critical sections to a file. Exit code 0 on
// success; otherwise the error is on stderr.
#include <mysql.h>

#include <exception>
#include <iostream>

#include "contention.h"

int main(int argc, char** argv) {
  using namespace holdfast::sql::testing;
  mysql_library_init(0, nullptr, nullptr);
  try {
    std::filesystem::path intervals_out;
    const Workload workload = parse_workload_arguments(argc, argv, &intervals_out);
    write_intervals(intervals_out, run_workload(workload));
  } catch (const std::exception& e) {
    std::cerr << "sql_contender: " << e.what() << '\n';
    return 1;
  }
  mysql_library_end();
  return 0;
}
