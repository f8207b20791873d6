// Duration flags (--ttl 30s, --wait 5m, --lock-delay 1500ms, --session-grace-ms 10s): what a
// person types, read by the one duration parser of core/duration.h. This header stays free of
// core's types, so that files which include the client library's (holdfast/client.h, whose
// names collide with core's) can use it.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace holdfast::cli {

// A CLI11 transform for an option bound to an integer of milliseconds: reads a duration and
// leaves its milliseconds as the option's text. A duration below `min_ms` is refused too. The
// errors read `--ttl: "30x" is not a duration (use ...)` and `--ttl: "0" is below 1ms`.
CLI::Validator duration_flag(std::int64_t min_ms);
// The same for the one flag counted in microseconds (--idle-poll-us 500us, 2ms, or 250).
CLI::Validator duration_us_flag();

// A duration as the flags take it, in the largest exact unit: 600000 -> "10m" (for messages).
std::string duration_text(std::int64_t ms);

}  // namespace holdfast::cli
