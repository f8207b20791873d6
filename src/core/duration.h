// Durations as people type them: on the command line (`--ttl 30s`) and in holdfast.toml
// (`maxLeaseMs = "24h"`). The wire (RESP TTL/TIMEOUT, the HTTP API's fields) stays integer
// milliseconds; this is only for what a person writes.
//
//   duration = digits                      ; a plain number: milliseconds
//            | digits [ "." digits ] unit  ; 1500ms, 30s, 1.5s, 5m, 2h
//   unit     = "ms" | "s" | "m" | "h"
//
// The amount must come to a whole number of milliseconds (`1.5s` is 1500 ms; `1.5ms` and
// `0.0001s` are refused) within 64 bits. No sign, no spaces, no exponent, units lower case
// only, one unit per duration (`1m30s` is refused: write `90s`).
//
// The one setting counted in microseconds (`idlePollUs`, `--idle-poll-us`) reads the same way
// with the unit "us" added and microseconds as what a plain number and the whole amount are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/error.h"

namespace holdfast {

// What every duration error ends with: how to write one.
inline constexpr std::string_view kDurationHint =
    "use a whole number of milliseconds, or units ms, s, m, h: 1500ms, 30s, 5m, 2h";

// The milliseconds `text` stands for, or INVALID_ARGUMENT whose message quotes `text` and says
// what is wrong with it (`"30x" is not a duration (use ...)`); callers prefix the setting or
// flag it came from.
Result<Millis> parse_duration(std::string_view text);

inline constexpr std::string_view kMicrosecondsHint =
    "use a whole number of microseconds, or units us, ms, s: 500us, 2ms";
// The microseconds `text` stands for: "250" and "250us" are 250, "2ms" is 2000; errors as
// parse_duration's, with kMicrosecondsHint.
Result<std::int64_t> parse_duration_us(std::string_view text);

// The shortest exact spelling in the largest unit that divides it: 1500 -> "1500ms",
// 30000 -> "30s", 90000 -> "90s", 7200000 -> "2h", 0 -> "0ms". For messages; parse_duration
// reads it back to the same value.
std::string format_duration(Millis ms);

}  // namespace holdfast
