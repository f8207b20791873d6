#include "core/values/redis_numbers.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace holdfast {
namespace {

// strtod needs a NUL-terminated string; arguments are views into a connection's buffer.
// Redis's arguments are at most 512 MB, ours at most a frame (1 MiB): a short one goes on the
// stack.
template <typename Fn>
auto with_c_string(std::string_view text, Fn fn) {
  char small[128];
  if (text.size() < sizeof(small)) {
    text.copy(small, text.size());
    small[text.size()] = '\0';
    return fn(static_cast<const char*>(small));
  }
  const std::string copy(text);
  return fn(copy.c_str());
}

}  // namespace

std::optional<double> small_decimal(std::string_view s) {
  const bool negative = !s.empty() && s[0] == '-';
  const std::size_t first = negative ? 1 : 0;
  if (s.size() == first || s.size() - first > 15) return std::nullopt;
  std::int64_t v = 0;
  for (std::size_t i = first; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -static_cast<double>(v) : static_cast<double>(v);
}

std::optional<std::int64_t> parse_redis_integer(std::string_view s) {
  // string2ll: at most 20 characters, "0", or an optional '-' and a digit 1-9 first.
  if (s.empty() || s.size() > 20) return std::nullopt;
  if (s == "0") return 0;
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == s.size()) return std::nullopt;
  if (s[i] < '1' || s[i] > '9') return std::nullopt;
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (v > kMax + 1) return std::nullopt;
    return v == kMax + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
  }
  if (v > kMax) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<double> parse_redis_score(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  if (const auto v = small_decimal(text)) return v;  // the common case: a timestamp, a count
  return with_c_string(text, [&](const char* s) -> std::optional<double> {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (static_cast<std::size_t>(end - s) != text.size()) return std::nullopt;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO))
      return std::nullopt;
    if (std::isnan(v)) return std::nullopt;
    return v;
  });
}

std::optional<ScoreBound> parse_score_bound(std::string_view text) {
  ScoreBound bound;
  if (!text.empty() && text[0] == '(') {
    bound.exclusive = true;
    text.remove_prefix(1);
  }
  if (const auto v = small_decimal(text)) {
    bound.value = *v;
    return bound;
  }
  const auto value = with_c_string(text, [](const char* s) -> std::optional<double> {
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (*end != '\0' || std::isnan(v)) return std::nullopt;
    return v;
  });
  if (!value) return std::nullopt;
  bound.value = *value;
  return bound;
}

std::string format_redis_double(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[32];
  // A whole number below 10^15 has fewer than 17 digits, so "%.17g" prints it as an integer;
  // -0.0 ("-0") is left to snprintf.
  if (std::trunc(value) == value && std::fabs(value) < 1e15 &&
      !(value == 0 && std::signbit(value))) {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), static_cast<std::int64_t>(value));
    return std::string(buf, end);
  }
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", value);
  return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<std::int64_t> add_checked(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

}  // namespace holdfast
