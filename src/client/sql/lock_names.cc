// Name-to-lock mappings: the 64-bit PostgreSQL key and the 64-character MariaDB/MySQL name.
// Both derive from SHA-256 because the databases compute it too (sha256(), SHA2()), so an
// operator can go from a name to what pg_locks or IS_USED_LOCK shows with SQL alone; the
// queries are in advisory_lock.h and docs/sql-advisory-locks.md.
#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "holdfast/sql/advisory_lock.h"

namespace holdfast::sql {
namespace {

using Sha256 = std::array<unsigned char, 32>;

Sha256 sha256(std::string_view bytes) {
  Sha256 digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size()) {
    throw std::runtime_error("holdfast::sql: SHA-256 unavailable in OpenSSL");
  }
  return digest;
}

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Characters as MariaDB counts them on a utf8mb4 connection: code points, i.e. bytes that do
// not continue a multi-byte sequence.
std::size_t utf8_length(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += is_utf8_continuation(c) ? 0 : 1;
  return n;
}

// The longest prefix of `text` holding `chars` code points.
std::string_view utf8_prefix(std::string_view text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_utf8_continuation(text[i]) && seen++ == chars) return text.substr(0, i);
  }
  return text;
}

}  // namespace

std::int64_t advisory_key(std::string_view name) {
  const Sha256 digest = sha256(name);
  std::uint64_t key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | digest[i];
  return static_cast<std::int64_t>(key);  // two's complement, as PostgreSQL's bit(64)::bigint
}

std::string mysql_lock_name(std::string_view name) {
  if (utf8_length(name) <= kMysqlLockNameMaxChars) return std::string(name);
  constexpr std::size_t kPrefixChars = 31;
  constexpr std::size_t kHashHexDigits = kMysqlLockNameMaxChars - kPrefixChars - 1;
  static constexpr char kHex[] = "0123456789abcdef";
  const Sha256 digest = sha256(name);
  std::string result(utf8_prefix(name, kPrefixChars));
  result += '~';
  for (std::size_t i = 0; i < kHashHexDigits; ++i) {
    const unsigned char byte = digest[i / 2];
    result += kHex[i % 2 == 0 ? byte >> 4 : byte & 0x0F];
  }
  return result;
}

}  // namespace holdfast::sql
