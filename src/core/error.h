// The one error type shared by every module: a code from docs/reference.md section 5, a one-line
// human message, and named details. Exceptions appear only at the public client API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace holdfast {

enum class ErrorCode : std::uint8_t {
  kLockTimeout,
  kLockAccessDenied,
  kForbidden,
  kRateLimited,
  kUnauthenticated,
  kInvalidArgument,
  kLockHeld,
  kLockNotHolder,
  kRulesetConflict,
  kUnavailable,
  kStoreUnavailable,  // the write-ahead log cannot be written or synced: changes are refused
  kNotFound,          // HTTP only: unknown route
  kMethodNotAllowed,  // HTTP only: wrong method
  kWrongType,         // Redis's WRONGTYPE: a lock command on a typed value, or a typed command on a
                      // lock or on a value of another type (docs/redis-locks.md)
  kInternal,
};

// The wire name, e.g. "LOCK_TIMEOUT".
std::string_view code_name(ErrorCode code);
// The HTTP status of docs/reference.md section 5, e.g. 409 for LOCK_TIMEOUT.
int http_status(ErrorCode code);

// A detail value is an integer or a string; renderers quote strings where the wire needs it.
using DetailValue = std::variant<std::int64_t, std::string>;

struct Error {
  ErrorCode code;
  std::string message;
  std::vector<std::pair<std::string, DetailValue>> details;

  Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}
  Error& with(std::string name, DetailValue value) {
    details.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  // Built in place: no variant is moved (GCC 12 warns, wrongly, on some inlined moves).
  Error& with(std::string name, std::int64_t value) {
    details.emplace_back(std::piecewise_construct, std::forward_as_tuple(std::move(name)),
                         std::forward_as_tuple(std::in_place_index<0>, value));
    return *this;
  }
  Error& with(std::string name, std::string value) {
    details.emplace_back(std::piecewise_construct, std::forward_as_tuple(std::move(name)),
                         std::forward_as_tuple(std::in_place_index<1>, std::move(value)));
    return *this;
  }
  Error& with(std::string name, const char* value) {
    return with(std::move(name), std::string(value));
  }
};

inline Error invalid_argument(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

// The contract's errors that every backend answers alike, with their details.
// LOCK_TIMEOUT key=... timeoutMs=...: a wait (or one attempt, timeoutMs 0) did not win the key.
Error lock_timeout(std::string_view key, std::int64_t timeout_ms);
// RATE_LIMITED retryAfterMs=...: over the hourly cap of acquire attempts.
Error rate_limited(std::int64_t retry_after_ms);
// LOCK_HELD key=...: an assign without a timeout met another holder.
Error lock_held(std::string_view key);
// LOCK_NOT_HOLDER key=...: a transfer, unassign or check for a holder id that does not hold the
// key; `why` says what holds it instead.
Error not_holder(std::string_view key, std::string_view why);
// UNAVAILABLE recoveringUntil=...: after an unclean stop in the horizon durability mode nothing
// new is granted before that instant (what /readyz and a transfer answer meanwhile).
Error recovering_error(std::int64_t until_ms);

// Result<T>: a value or an Error (std::expected is C++23).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace holdfast
