// Errors thrown by the Holdfast client library. Every server error arrives as a subclass of
// holdfast::Error whose code() is the wire code of docs/reference.md section 5; details() holds its
// named details as strings (e.g. "key", "timeoutMs", "retryAfterMs").
//
// Every public client name lives in the inline namespace holdfast::v0: code writes
// holdfast::Error, but the symbols are holdfast::v0::..., so they never collide with the
// server's internal types of the same names (holdfast::Error in src/core/error.h) when both are
// linked into one program, as in the holdfast binary. Do not include both in one file.
#pragma once

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace holdfast::inline v0 {

class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message,
        std::map<std::string, std::string> details = {})
      : std::runtime_error(message), code_(std::move(code)), details_(std::move(details)) {}

  // The wire code, e.g. "LOCK_TIMEOUT", or "CONNECTION" for client-side transport failures.
  const std::string& code() const noexcept { return code_; }
  const std::map<std::string, std::string>& details() const noexcept { return details_; }

 private:
  std::string code_;
  std::map<std::string, std::string> details_;
};

// A blocking acquire (or a local wait for the same key) did not win within its timeout.
class LockTimeoutError : public Error {
 public:
  LockTimeoutError(std::string key, std::chrono::milliseconds timeout, const std::string& message)
      : Error("LOCK_TIMEOUT", message,
              {{"key", key}, {"timeoutMs", std::to_string(timeout.count())}}),
        key_(std::move(key)),
        timeout_(timeout) {}
  const std::string& key() const noexcept { return key_; }
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }

 private:
  std::string key_;
  std::chrono::milliseconds timeout_;
};

// A rule of the server's lock rule set refused the operation (LOCK_ACCESS_DENIED).
class AccessDeniedError : public Error {
 public:
  using Error::Error;
};

// An admin-only operation by a member (FORBIDDEN).
class ForbiddenError : public Error {
 public:
  using Error::Error;
};

// Over the acquire cap (RATE_LIMITED); retry_after() says when a new attempt can count.
class RateLimitedError : public Error {
 public:
  RateLimitedError(const std::string& message, std::chrono::milliseconds retry_after,
                   std::map<std::string, std::string> details)
      : Error("RATE_LIMITED", message, std::move(details)), retry_after_(retry_after) {}
  std::chrono::milliseconds retry_after() const noexcept { return retry_after_; }

 private:
  std::chrono::milliseconds retry_after_;
};

// Missing or unknown credentials (UNAUTHENTICATED).
class UnauthenticatedError : public Error {
 public:
  using Error::Error;
};

// Bad key, TTL, timeout, owner, body or rule set (INVALID_ARGUMENT).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

// assign/transfer/unassign conflicts (LOCK_HELD, LOCK_NOT_HOLDER).
class LockHeldError : public Error {
 public:
  using Error::Error;
};
class NotHolderError : public Error {
 public:
  using Error::Error;
};

// A second lock rule set (RULESET_CONFLICT).
class RulesetConflictError : public Error {
 public:
  using Error::Error;
};

// The server is shutting down or its store is unavailable (UNAVAILABLE).
class UnavailableError : public Error {
 public:
  using Error::Error;
};

// The server's write-ahead log cannot be written (a full or failing disk): it refused a change
// and changed nothing (STORE_UNAVAILABLE). Reads still work; retry after details
// "retryAfterMs". A kind of UnavailableError.
class StoreUnavailableError : public UnavailableError {
 public:
  using UnavailableError::UnavailableError;
};

// The connection could not be made or broke while a call was in flight (code "CONNECTION").
// A call that fails this way may or may not have taken effect on the server.
class ConnectionError : public Error {
 public:
  explicit ConnectionError(const std::string& message) : Error("CONNECTION", message) {}

 protected:
  ConnectionError(std::string code, const std::string& message,
                  std::map<std::string, std::string> details = {})
      : Error(std::move(code), message, std::move(details)) {}
};

// The peer answered something that is not a Holdfast reply (code "PROTOCOL"): a corrupt
// stream, or not a Holdfast server at that address. The connection is closed; like any
// ConnectionError, the call may or may not have taken effect. When the peer's first answer
// was not RESP at all, details() has "protocol": "http" for an HTTP server (the HTTP port of
// a Holdfast server, say) and "unknown" for anything else.
class ProtocolError : public ConnectionError {
 public:
  explicit ProtocolError(const std::string& message,
                         std::map<std::string, std::string> details = {})
      : ConnectionError("PROTOCOL", message, std::move(details)) {}
};

}  // namespace holdfast::inline v0
