#include "server/pg_list.h"

namespace holdfast {

std::string glob_literal_prefix(std::string_view glob) {
  const auto special = glob.find_first_of("*?[\\");
  return std::string(glob.substr(0, special));
}

std::string encode_list_cursor(std::string_view last_key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(last_key.size() * 2);
  for (unsigned char c : last_key) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::optional<std::string> decode_list_cursor(std::string_view cursor) {
  if (cursor.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  out.reserve(cursor.size() / 2);
  for (std::size_t i = 0; i < cursor.size(); i += 2) {
    const int hi = nibble(cursor[i]), lo = nibble(cursor[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace holdfast
