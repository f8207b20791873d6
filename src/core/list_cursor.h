// LOCK.LIST cursors, one codec for every backend: a cursor is the lower-case hex of the last
// key of the page it ends ("0" starts and ends a listing), so the next page starts after it in
// byte order whatever changed in between. Opaque to clients.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/text.h"

namespace holdfast {

inline std::string encode_list_cursor(std::string_view last_key) { return hex_encode(last_key); }

// The key to list after: "" for "0" or an empty cursor; nullopt when `cursor` is not one this
// server made.
inline std::optional<std::string> decode_list_cursor(std::string_view cursor) {
  if (cursor.empty() || cursor == "0") return std::string();
  auto key = hex_decode(cursor);
  if (!key || key->empty()) return std::nullopt;
  return key;
}

}  // namespace holdfast
