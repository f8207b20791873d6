// The server's log: standard error, one record per line, as text for people or as JSON for log
// collectors, from a configured level up. Standard output carries only the ready line
// (server.cc), which scripts wait for.
//
// Every spdlog call in the process (spdlog::info(...) and friends) goes through the logger
// that install_logger() sets up, so existing call sites need nothing. log_event() adds named
// fields to a record. A record is always one line: newlines and other control characters in
// a message or a field are escaped, and bytes that are not UTF-8 read as U+FFFD.
//
//   text: 2026-12-02T10:15:03.250Z info recovered the log holds=12 nextToken=40
//   json: {"time":"2026-12-02T10:15:03.250Z","level":"info","message":"recovered the log",
//          "holds":12,"nextToken":40}
//
// A line that one client's input can cause must name that client's connection with the field
// `connection` (its CLIENT ID) and must not quote more of the input than it needs.
#pragma once

#include <initializer_list>
#include <string_view>
#include <utility>

#include "core/error.h"

namespace holdfast {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

// "debug", "info", "warn", "error" (the names in holdfast.toml, flags and records).
std::string_view log_level_name(LogLevel level);
Result<LogLevel> parse_log_level(std::string_view name);
// "text" or "json".
Result<LogFormat> parse_log_format(std::string_view name);

// Makes the process's default logger write to standard error in `format`, dropping records
// below `level`. Call once, before anything logs and before threads start.
void install_logger(LogLevel level, LogFormat format);

using LogFields = std::initializer_list<std::pair<std::string_view, DetailValue>>;

// Logs `message` with `fields` (name = integer or string) through the default logger. Text
// shows them as name=value words after the message (values with spaces, quotes or `=` are
// JSON-quoted); JSON as members of the record.
void log_event(LogLevel level, std::string_view message, LogFields fields);

}  // namespace holdfast
