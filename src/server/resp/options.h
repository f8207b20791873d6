// Declarative command options: each command lists its "NAME value" options (TTL 1000 OWNER x
// SESSION ...) as data, and one parser reads them for every command, with the first error
// sticking, as in Dragonfly's CmdArgParser. Names match case-insensitively; an option given
// twice, an unknown option, a missing value or a value of the wrong form is INVALID_ARGUMENT
// naming it, and a required option that is missing answers the option's own message.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/error.h"

namespace holdfast::resp {

enum class OptionKind : std::uint8_t {
  kMillis,  // a strict 64-bit integer number of milliseconds
  kCount,   // a strict integer of at least 1
  kText,    // any bytes
  kFlag,    // no value
};

struct OptionSpec {
  std::string_view name;  // upper case
  OptionKind kind;
  std::string_view required;  // non-empty: the option must be given; the error if it is not
};

struct OptionValue {
  bool present = false;
  std::int64_t number = 0;  // kMillis, kCount
  std::string_view text;    // kText
};

inline constexpr std::size_t kMaxOptions = 8;
using OptionValues = std::array<OptionValue, kMaxOptions>;

// Reads `args` into `values` (values[i] for specs[i]). REQUIRES: specs.size() <= kMaxOptions.
std::optional<Error> parse_options(std::span<const std::string_view> args,
                                   std::span<const OptionSpec> specs, std::string_view command,
                                   OptionValues& values);

}  // namespace holdfast::resp
