// Number formats of the report's tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace holdfast::bench {

std::string fmt(double v, int decimals);
// 41230.7 -> "41,231"
std::string fmt_count(double v);
// Nanoseconds as microseconds: one decimal below 100, whole above.
std::string fmt_us(std::int64_t ns);
// 1.234 -> "1.23×"; small ratios keep two significant digits; "–" for none.
std::string fmt_ratio(std::optional<double> r);
std::string fmt_mib(std::int64_t bytes);
// The first line of a message, fit for a table cell (no '|').
std::string first_line(const std::string& s);

}  // namespace holdfast::bench
