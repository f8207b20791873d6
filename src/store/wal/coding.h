// Little-endian fixed-width integers and length-prefixed strings, the primitives of every
// record and snapshot field (docs/wal-format.md). Byte order is spelled out by shifts so the
// format does not depend on the host.
//
// Writing appends to a caller's std::string: the batch buffer and the snapshot buffer are
// reused across calls, which is what keeps append() free of allocations in steady state.
// Reading goes through Decoder, a cursor over a string_view whose first failure sticks, so a
// decoder of a structure reads every field and checks ok() once at the end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace holdfast::wal {

inline void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }

inline void put_u32(std::string& out, std::uint32_t v) {
  const char bytes[4] = {static_cast<char>(v), static_cast<char>(v >> 8),
                         static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  out.append(bytes, 4);
}

inline void put_u64(std::string& out, std::uint64_t v) {
  put_u32(out, static_cast<std::uint32_t>(v));
  put_u32(out, static_cast<std::uint32_t>(v >> 32));
}

inline void put_i64(std::string& out, std::int64_t v) {
  put_u64(out, static_cast<std::uint64_t>(v));
}

// Writing into space already sized (one resize for a whole structure instead of one append
// per field: an append is an out-of-line call, ~10 ns, and a hold has 17 fields). Each
// returns the position after what it wrote.
inline char* write_u8(char* p, std::uint8_t v) {
  *p = static_cast<char>(v);
  return p + 1;
}
inline char* write_u32(char* p, std::uint32_t v) {
  p[0] = static_cast<char>(v);
  p[1] = static_cast<char>(v >> 8);
  p[2] = static_cast<char>(v >> 16);
  p[3] = static_cast<char>(v >> 24);
  return p + 4;
}
inline char* write_u64(char* p, std::uint64_t v) {
  return write_u32(write_u32(p, static_cast<std::uint32_t>(v)),
                   static_cast<std::uint32_t>(v >> 32));
}
inline char* write_bytes(char* p, std::string_view s) {
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
inline char* write_str(char* p, std::string_view s) {
  return write_bytes(write_u32(p, static_cast<std::uint32_t>(s.size())), s);
}

// REQUIRES: s.size() < 4 GiB (keys are at most 1 KiB; rule sets are small texts).
inline void put_str(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

// Overwrites 4 bytes at `at` (used to fill in a length once the payload is written).
inline void store_u32_at(std::string& out, std::size_t at, std::uint32_t v) {
  out[at] = static_cast<char>(v);
  out[at + 1] = static_cast<char>(v >> 8);
  out[at + 2] = static_cast<char>(v >> 16);
  out[at + 3] = static_cast<char>(v >> 24);
}

inline std::uint32_t load_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<std::uint32_t>(u[0]) | (static_cast<std::uint32_t>(u[1]) << 8) |
         (static_cast<std::uint32_t>(u[2]) << 16) | (static_cast<std::uint32_t>(u[3]) << 24);
}

inline std::uint64_t load_u64(const char* p) {
  return static_cast<std::uint64_t>(load_u32(p)) |
         (static_cast<std::uint64_t>(load_u32(p + 4)) << 32);
}

class Decoder {
 public:
  explicit Decoder(std::string_view data) : rest_(data) {}

  bool ok() const { return ok_; }
  bool done() const { return rest_.empty(); }
  std::size_t remaining() const { return rest_.size(); }

  std::uint8_t u8() {
    if (!need(1)) return 0;
    const auto v = static_cast<std::uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return v;
  }
  std::uint32_t u32() {
    if (!need(4)) return 0;
    const std::uint32_t v = load_u32(rest_.data());
    rest_.remove_prefix(4);
    return v;
  }
  std::uint64_t u64() {
    if (!need(8)) return 0;
    const std::uint64_t v = load_u64(rest_.data());
    rest_.remove_prefix(8);
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }

  // A view into the decoded buffer: valid as long as that buffer is.
  std::string_view bytes(std::size_t n) {
    if (!need(n)) return {};
    const std::string_view v = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return v;
  }
  std::string_view str() { return bytes(u32()); }

  template <std::size_t N>
  std::array<std::uint8_t, N> fixed() {
    std::array<std::uint8_t, N> out{};
    const std::string_view b = bytes(N);
    if (ok_) std::memcpy(out.data(), b.data(), N);
    return out;
  }

  // Marks the input as malformed (a field value out of range).
  void fail() { ok_ = false; }

 private:
  bool need(std::size_t n) {
    if (!ok_ || rest_.size() < n) {
      ok_ = false;
      return false;
    }
    return true;
  }

  std::string_view rest_;
  bool ok_ = true;
};

}  // namespace holdfast::wal
