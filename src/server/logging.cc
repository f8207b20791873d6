// How records become lines. spdlog 1.10 has no structured fields, so log_event() hands its
// fields to the formatter through a thread-local pointer: the default logger is synchronous,
// so the formatter runs on the logging thread, inside the spdlog call that log_event() makes.
#include "server/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "cel/utf8.h"

namespace holdfast {
namespace {

thread_local const LogFields* t_fields = nullptr;
std::atomic<bool> g_installed{false};

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::string_view record_level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    default:
      return "critical";
  }
}

// Appends `text` with control characters escaped as in JSON (and, `in_quotes`, quotes and
// backslashes too) and each byte that does not start valid UTF-8 replaced by U+FFFD, so that
// a record stays one line of valid UTF-8.
void append_escaped(std::string& out, std::string_view text, bool in_quotes) {
  static constexpr char kHex[] = "0123456789abcdef";
  while (!text.empty()) {
    const std::size_t bad = cel::find_invalid_utf8(text);
    const std::string_view valid = text.substr(0, bad);
    for (char c : valid) {
      const auto u = static_cast<unsigned char>(c);
      if (in_quotes && (c == '"' || c == '\\')) {
        out.push_back('\\');
        out.push_back(c);
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c == '\r') {
        out.append("\\r");
      } else if (c == '\t') {
        out.append("\\t");
      } else if (u < 0x20 || u == 0x7F) {
        out.append("\\u00");
        out.push_back(kHex[u >> 4]);
        out.push_back(kHex[u & 15]);
      } else {
        out.push_back(c);
      }
    }
    if (bad == std::string_view::npos) break;
    out.append("\xEF\xBF\xBD");  // U+FFFD
    text.remove_prefix(bad + 1);
  }
}

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('"');
  append_escaped(out, text, true);
  out.push_back('"');
}

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || u < 0x20 || u == 0x7F || u >= 0x80)
      return true;
  }
  return false;
}

void append_text_field(std::string& out, std::string_view name, const DetailValue& value) {
  out.push_back(' ');
  out.append(name);
  out.push_back('=');
  if (const auto* n = std::get_if<std::int64_t>(&value)) {
    out.append(std::to_string(*n));
  } else if (const auto& s = std::get<std::string>(value); needs_quotes(s)) {
    append_quoted(out, s);
  } else {
    out.append(s);
  }
}

void append_json_field(std::string& out, std::string_view name, const DetailValue& value) {
  out.push_back(',');
  append_quoted(out, name);
  out.push_back(':');
  if (const auto* n = std::get_if<std::int64_t>(&value)) {
    out.append(std::to_string(*n));
  } else {
    append_quoted(out, std::get<std::string>(value));
  }
}

// 2026-12-02T10:15:03.250Z
std::string utc_time(std::chrono::system_clock::time_point at) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char buf[32];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms % 1000));
  out.append(frac);
  return out;
}

class RecordFormatter final : public spdlog::formatter {
 public:
  explicit RecordFormatter(LogFormat format) : format_(format) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view message(msg.payload.data(), msg.payload.size());
    std::string line;
    if (format_ == LogFormat::kJson) {
      line.append("{\"time\":\"").append(utc_time(msg.time)).append("\",\"level\":\"");
      line.append(record_level_name(msg.level)).append("\",\"message\":");
      append_quoted(line, message);
      if (t_fields != nullptr)
        for (const auto& [name, value] : *t_fields) append_json_field(line, name, value);
      line.push_back('}');
    } else {
      line.append(utc_time(msg.time)).push_back(' ');
      line.append(record_level_name(msg.level)).push_back(' ');
      append_escaped(line, message, false);
      if (t_fields != nullptr)
        for (const auto& [name, value] : *t_fields) append_text_field(line, name, value);
    }
    line.push_back('\n');
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<RecordFormatter>(format_);
  }

 private:
  LogFormat format_;
};

}  // namespace

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

Result<LogLevel> parse_log_level(std::string_view name) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError})
    if (name == log_level_name(level)) return level;
  return invalid_argument("log level must be debug, info, warn or error, not \"" +
                          std::string(name) + "\"");
}

Result<LogFormat> parse_log_format(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return invalid_argument("log format must be text or json, not \"" + std::string(name) + "\"");
}

void install_logger(LogLevel level, LogFormat format) {
  auto logger = std::make_shared<spdlog::logger>("holdfast",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::make_unique<RecordFormatter>(format));
  logger->set_level(to_spdlog(level));
  // The sink flushes every record: a crash must not lose the lines before it.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  g_installed = true;
}

void log_event(LogLevel level, std::string_view message, LogFields fields) {
  if (!g_installed) {
    // Not formatted by RecordFormatter (a test, a tool): fields as text after the message.
    std::string line(message);
    for (const auto& [name, value] : fields) append_text_field(line, name, value);
    spdlog::log(to_spdlog(level), "{}", line);
    return;
  }
  t_fields = &fields;
  spdlog::log(to_spdlog(level), "{}", message);
  t_fields = nullptr;
}

}  // namespace holdfast
