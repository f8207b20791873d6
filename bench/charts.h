// The report's two charts, drawn with gnuplot (pngcairo): throughput and p99 latency by
// connection count, one line per target, in two panels: (a) try+release pairs with the
// PING+PING floor dashed, and (c) pipelined try-acquires. Log scales, since etcd and a
// pipelined Redis are two orders of magnitude apart.
#pragma once

#include <filesystem>
#include <string>

#include "suite.h"

namespace holdfast::bench {

// Whether the run has a figure the charts draw (pairs, the floor or pipelined acquires).
bool has_chart_figures(const SuiteResults& results);

// Returns "" on success, else why the charts are missing (none to draw included).
std::string draw_charts(const SuiteResults& results, const std::filesystem::path& throughput_png,
                        const std::filesystem::path& p99_png);

}  // namespace holdfast::bench
