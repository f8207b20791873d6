#include "core/handle.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace holdfast {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";  // Crockford base32

// Digit value by character, either case; -1 for anything else (I, L, O, U among them).
constexpr std::array<std::int8_t, 256> kDigitOf = [] {
  std::array<std::int8_t, 256> t{};
  t.fill(-1);
  for (int i = 0; i < 32; ++i) {
    const char c = kAlphabet[i];
    t[static_cast<unsigned char>(c)] = static_cast<std::int8_t>(i);
    if (c >= 'A' && c <= 'Z')
      t[static_cast<unsigned char>(c - 'A' + 'a')] = static_cast<std::int8_t>(i);
  }
  return t;
}();

int decode_char(char c) { return kDigitOf[static_cast<unsigned char>(c)]; }

}  // namespace

bool Handle::is_null() const {
  for (auto b : bytes)
    if (b != 0) return false;
  return true;
}

// 128 bits as 26 base32 digits: the first digit carries the top 3 bits (value 0..7).
void Handle::write(char* out) const {
  unsigned __int128 v = 0;
  for (auto b : bytes) v = (v << 8) | b;
  for (int i = static_cast<int>(kHandleChars) - 1; i >= 0; --i) {
    out[i] = kAlphabet[static_cast<unsigned>(v & 31)];
    v >>= 5;
  }
}

std::string Handle::to_string() const {
  std::string out(kHandleChars, '0');
  write(out.data());
  return out;
}

std::optional<Handle> Handle::parse(std::string_view text) {
  if (text.size() != kHandleChars) return std::nullopt;
  unsigned __int128 v = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    int d = decode_char(text[i]);
    if (d < 0 || (i == 0 && d > 7)) return std::nullopt;
    v = (v << 5) | static_cast<unsigned>(d);
  }
  Handle h;
  for (int i = 15; i >= 0; --i) {
    h.bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v & 0xff);
    v >>= 8;
  }
  return h;
}

Handle HandleSource::next() {
  if (used_ + 16 > pool_.size()) {
    std::size_t filled = 0;
    while (filled < pool_.size()) {
      ssize_t n = getrandom(pool_.data() + filled, pool_.size() - filled, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error("getrandom failed: " + std::string(std::strerror(errno)));
      }
      filled += static_cast<std::size_t>(n);
    }
    used_ = 0;
  }
  Handle h;
  std::memcpy(h.bytes.data(), pool_.data() + used_, 16);
  // Wipe what was handed out so a later memory disclosure cannot replay it.
  std::memset(pool_.data() + used_, 0, 16);
  used_ += 16;
  return h;
}

}  // namespace holdfast
