// Framing the replies a RESP server writes, for the fuzzers that check them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/validation.h"

namespace holdfast::fuzz {

// The replies at the front of `data`: one complete top-level RESP reply, or nullopt when the
// data ends inside one. *bad is set when the bytes are not RESP the server could have written.
inline std::optional<std::size_t> reply_length(std::string_view data, std::size_t at, bool* bad) {
  if (at >= data.size()) return std::nullopt;
  const std::size_t eol = data.find("\r\n", at);
  if (eol == std::string_view::npos) return std::nullopt;
  const char type = data[at];
  const std::string_view line = data.substr(at + 1, eol - at - 1);
  std::size_t end = eol + 2;
  switch (type) {
    case '+':
    case '-':
    case '_':
      return end;
    case ':':
      if (!parse_int64(line)) *bad = true;
      return end;
    case '$':
    case '=': {  // a bulk string, or RESP3 verbatim text (INFO, CLIENT LIST)
      const auto n = parse_int64(line);
      if (!n || *n < -1) {
        *bad = true;
        return end;
      }
      if (*n == -1) return end;
      if (end + static_cast<std::size_t>(*n) + 2 > data.size()) return std::nullopt;
      if (data.substr(end + static_cast<std::size_t>(*n), 2) != "\r\n") *bad = true;
      return end + static_cast<std::size_t>(*n) + 2;
    }
    case '*':
    case '~':  // RESP3 set (COMMAND's flags)
    case '%': {
      const auto n = parse_int64(line);
      if (!n || *n < -1) {
        *bad = true;
        return end;
      }
      const std::int64_t items = type == '%' ? 2 * *n : *n;
      for (std::int64_t i = 0; i < items; ++i) {
        auto next = reply_length(data, end, bad);
        if (!next || *bad) return next;
        end = *next;
      }
      return end;
    }
    default:
      *bad = true;
      return end;
  }
}

// How many complete top-level replies `data` holds; *bad when it is not what a server writes.
inline std::size_t count_replies(std::string_view data, bool* bad) {
  std::size_t n = 0, at = 0;
  while (at < data.size()) {
    const auto end = reply_length(data, at, bad);
    if (!end || *bad) break;
    at = *end;
    ++n;
  }
  return n;
}

}  // namespace holdfast::fuzz
