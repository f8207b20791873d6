#include "core/duration.h"

#include <array>
#include <cstdint>
#include <span>

namespace holdfast {
namespace {

struct Unit {
  std::string_view name;
  std::int64_t base;  // how many of the base unit (a millisecond, or a microsecond) it is
};
// Largest first: format_duration takes the first that divides exactly.
constexpr std::array<Unit, 4> kUnits = {{{"h", 3'600'000}, {"m", 60'000}, {"s", 1000}, {"ms", 1}}};
constexpr std::array<Unit, 5> kMicroUnits = {
    {{"h", 3'600'000'000}, {"m", 60'000'000}, {"s", 1'000'000}, {"ms", 1000}, {"us", 1}}};

// A grammar (duration.h) over one table of units: its base unit's name and how to write one.
struct Scale {
  std::span<const Unit> units;
  std::string_view base;  // "milliseconds"
  std::string_view hint;
};
constexpr Scale kMillis{kUnits, "milliseconds", kDurationHint};
constexpr Scale kMicros{kMicroUnits, "microseconds", kMicrosecondsHint};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

Error not_a_duration(std::string_view text, const Scale& scale) {
  return invalid_argument(quoted(text) + " is not a duration (" + std::string(scale.hint) + ")");
}

// Digits into *out; false when they do not fit in 64 bits.
bool accumulate(std::string_view digits, std::int64_t* out) {
  std::int64_t v = 0;
  for (const char c : digits) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) return false;
  }
  *out = v;
  return true;
}

Result<std::int64_t> parse_in(std::string_view text, const Scale& scale) {
  if (!text.empty() && text[0] == '-')
    return invalid_argument(quoted(text) + " is negative: a duration is 0 or more");
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  const std::string_view whole = text.substr(0, i);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    fraction = text.substr(start, i - start);
    if (fraction.empty()) return not_a_duration(text, scale);
  }
  const std::string_view unit_name = text.substr(i);
  if (whole.empty()) return not_a_duration(text, scale);
  std::int64_t unit = 0;
  if (unit_name.empty()) {
    if (text.size() != whole.size())  // "1.5": a plain number is of the base unit, and whole
      return invalid_argument(quoted(text) + " is not a whole number of " +
                              std::string(scale.base) + " (" + std::string(scale.hint) + ")");
    unit = 1;
  }
  for (const Unit& u : scale.units)
    if (unit_name == u.name) unit = u.base;
  if (unit == 0) return not_a_duration(text, scale);

  const Error too_long = invalid_argument(quoted(text) + " is too long");
  std::int64_t amount = 0;
  if (!accumulate(whole, &amount)) return too_long;
  std::int64_t total = 0;
  if (__builtin_mul_overflow(amount, unit, &total)) return too_long;
  // The fraction's trailing zeros change nothing; what is left must make whole base units.
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  if (fraction.empty()) return total;
  const Error not_whole =
      invalid_argument(quoted(text) + " is not a whole number of " + std::string(scale.base));
  // An hour is 2^7 * 3^2 * 5^5 ms, so no fraction of more than 7 significant digits (its last
  // digit not 0) of any unit is whole milliseconds; 9 keeps the product within 64 bits. (In
  // microseconds a longer one can be whole, 0.0000000025h is 9 us; it is refused all the same.)
  if (fraction.size() > 9) return not_whole;
  std::int64_t digits = 0;
  accumulate(fraction, &digits);
  std::int64_t divisor = 1;
  for (std::size_t k = 0; k < fraction.size(); ++k) divisor *= 10;
  const std::int64_t part = digits * unit;  // < 10^9 * 3.6 * 10^9
  if (part % divisor != 0) return not_whole;
  if (__builtin_add_overflow(total, part / divisor, &total)) return too_long;
  return total;
}

}  // namespace

Result<Millis> parse_duration(std::string_view text) { return parse_in(text, kMillis); }

Result<std::int64_t> parse_duration_us(std::string_view text) { return parse_in(text, kMicros); }

std::string format_duration(Millis ms) {
  if (ms == 0) return "0ms";
  for (const Unit& u : kUnits)
    if (ms % u.base == 0) return std::to_string(ms / u.base) + std::string(u.name);
  return std::to_string(ms) + "ms";  // not reached: every value is a whole number of ms
}

}  // namespace holdfast
