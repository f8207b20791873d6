// The report of a run: DIR/<date>.md (the machine, one table per workload, the ratios
// Holdfast/peer for every figure, and the speed and efficiency goals checked against this run) and
// two gnuplot charts, DIR/<date>-throughput.png and DIR/<date>-p99.png (by connection count, one
// line per target).
#pragma once

#include <filesystem>
#include <string>

#include "suite.h"

namespace holdfast::bench {

struct ReportFiles {
  std::filesystem::path markdown;
  std::filesystem::path throughput_chart;
  std::filesystem::path p99_chart;
  // The run had figures to chart (has_chart_figures); without them no chart is drawn and that
  // is no error.
  bool charted = false;
  std::string chart_error;  // non-empty: the charts could not be drawn (gnuplot missing, ...)
};

// Today's local date as YYYY-MM-DD, the name of the report.
std::string today();

// Writes the report and the charts. Throws std::runtime_error if the markdown cannot be
// written; a chart failure is only noted in the result.
ReportFiles write_report(const SuiteResults& results, const std::filesystem::path& out_dir,
                         const std::string& date);

}  // namespace holdfast::bench
