// Number formats of the report's tables: see report_format.h.
#include "report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace holdfast::bench {

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_count(double v) {
  if (!std::isfinite(v)) return "–";
  std::string digits = std::to_string(std::llround(v));
  std::string out;
  const std::size_t start = digits[0] == '-' ? 1 : 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string fmt_us(std::int64_t ns) {
  const double us = static_cast<double>(ns) / 1e3;
  if (us < 100) return fmt(us, 1);
  return fmt_count(us);
}

std::string fmt_ratio(std::optional<double> r) {
  if (!r || !std::isfinite(*r)) return "–";
  if (*r < 0.1) {
    // Two significant digits, so that 0.0021 does not print as 0.00.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2g", *r);
    return std::string(buf) + "×";
  }
  return fmt(*r, *r < 10 ? 2 : 1) + "×";
}

std::string fmt_mib(std::int64_t bytes) { return fmt(static_cast<double>(bytes) / (1 << 20), 1); }

std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  std::replace(line.begin(), line.end(), '|', '/');
  return line;
}

}  // namespace holdfast::bench
