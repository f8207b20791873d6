#include "cli/duration_flag.h"

#include "core/duration.h"

namespace holdfast::cli {

CLI::Validator duration_flag(std::int64_t min_ms) {
  CLI::Validator v(
      [min_ms](std::string& text) -> std::string {
        const Result<Millis> ms = parse_duration(text);
        if (!ms.ok()) return ms.error().message;
        if (*ms < min_ms) return "\"" + text + "\" is below " + format_duration(min_ms);
        text = std::to_string(*ms);
        return "";
      },
      "");  // the option's type name says DURATION; a description would repeat it
  return v;
}

CLI::Validator duration_us_flag() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const Result<std::int64_t> us = parse_duration_us(text);
        if (!us.ok()) return us.error().message;
        text = std::to_string(*us);
        return "";
      },
      "");
}

std::string duration_text(std::int64_t ms) { return format_duration(ms); }

}  // namespace holdfast::cli
