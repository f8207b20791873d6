// Handles: the unguessable proof of holding a key. 128 random bits from the kernel's CSPRNG,
// printed as 26 characters of Crockford base32 (docs/reference.md 1.2: 128 random bits, 26
// printable characters).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace holdfast {

struct Handle {
  std::array<std::uint8_t, 16> bytes{};

  bool operator==(const Handle&) const = default;
  bool is_null() const;
  std::string to_string() const;  // 26 chars, e.g. "01J9Z3K7V0X4S8M2Q6T1A5B9CD"
  // Writes the same 26 characters to out[0..25] (no terminator): no allocation.
  void write(char* out) const;
  // Parses the printed form (case-insensitive). nullopt if it is not one of ours.
  static std::optional<Handle> parse(std::string_view text);
};

inline constexpr std::size_t kHandleChars = 26;

// Draws handles from getrandom(2), buffered so a handle costs no syscall most of the time.
// Not thread-safe: one per event loop.
class HandleSource {
 public:
  Handle next();

 private:
  std::array<std::uint8_t, 4096> pool_{};
  std::size_t used_ = pool_.size();
};

}  // namespace holdfast
