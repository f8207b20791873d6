// LOCK.LIST paging for the PostgreSQL node, matching the embedded table's contract: keys in
// byte order, cursors that are the hex of the last key returned ("0" starts and ends), and
// MATCH as a Redis-style glob applied before paging.
//
// The database scans in key order from max(cursor, the glob's literal prefix); the glob itself
// is applied here with the same matcher the embedded table uses (core/glob.h), so both modes
// agree on every pattern without translating globs to LIKE and its escapes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace holdfast {

// The characters every match must start with: the glob up to its first * ? [ or \.
std::string glob_literal_prefix(std::string_view glob);

std::string encode_list_cursor(std::string_view last_key);
// nullopt when `cursor` is not one we made.
std::optional<std::string> decode_list_cursor(std::string_view cursor);

}  // namespace holdfast
