// The checks holdfast-bench makes of its flags after parsing them: every count and duration in
// a range that can run, with a message that names the flag and the range. Separate from
// main.cc so the harness tests can hold the messages.
#pragma once

#include <string>
#include <vector>

#include "suite.h"

namespace holdfast::bench {

// The items of a comma list, empty ones skipped.
std::vector<std::string> split(const std::string& list);

// Parses a comma list of whole numbers from lo to hi (empty items are skipped) into out.
// Returns "" or the problem, naming `flag`: a list with nothing in it, an item that is not a
// number ("x", "1x", "2.5"), or one out of range.
std::string parse_counts(const std::string& flag, const std::string& list, int lo, int hi,
                         std::vector<int>& out);

// "" when every numeric field of `o` is in range, else the first problem found.
std::string check_options(const SuiteOptions& o);

}  // namespace holdfast::bench
