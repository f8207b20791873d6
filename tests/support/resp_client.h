// A small blocking RESP client for tests: sends commands (or raw bytes) and parses replies of
// either protocol version into a tree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/eventually.h"

namespace holdfast::testing {

struct RespValue {
  enum class Type { kSimple, kError, kInteger, kBulk, kNull, kArray, kMap, kBool, kDouble, kPush };
  Type type = Type::kNull;
  std::string str;               // simple, error, bulk, double text
  std::int64_t integer = 0;      // integer, bool
  std::vector<RespValue> items;  // array; map as key, value, key, value...

  bool is_error() const { return type == Type::kError; }
  bool is_null() const { return type == Type::kNull; }
  // The error's code: its first word.
  std::string error_code() const { return str.substr(0, str.find(' ')); }
  // Field lookup in a RESP3 map or a RESP2 flat key/value array; nullptr if absent.
  const RespValue* get(std::string_view name) const;
  std::string text(std::string_view name) const;     // "" if absent or null
  std::int64_t number(std::string_view name) const;  // 0 if absent
  bool has(std::string_view name) const { return get(name) != nullptr; }
  std::string debug() const;
};

class RespClient {
 public:
  // `receive_buffer` > 0: the socket's receive buffer is made that small before it connects (a
  // slow reader's test; shrunk after the connection is up, it makes TCP stall instead).
  static RespClient tcp(int port, int receive_buffer = 0);
  static RespClient unix_socket(const std::string& path);
  RespClient(RespClient&& other) noexcept;
  RespClient& operator=(RespClient&& other) noexcept;
  ~RespClient();

  RespValue call(const std::vector<std::string>& args, int timeout_ms = kEventuallyMs);
  void send(const std::vector<std::string>& args);
  void send_raw(std::string_view bytes);
  // Throws std::runtime_error on timeout or when the server closed the connection.
  RespValue read(int timeout_ms = kEventuallyMs);
  // True when the server closes the connection within timeout_ms (after any pending replies).
  bool wait_closed(int timeout_ms = kEventuallyMs);
  static std::string encode(const std::vector<std::string>& args);

 private:
  explicit RespClient(int fd) : fd_(fd) {}
  bool fill(int timeout_ms);
  bool parse(std::size_t* pos, RespValue* out);
  int fd_ = -1;
  std::string buf_;
};

}  // namespace holdfast::testing
