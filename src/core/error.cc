#include "core/error.h"

namespace holdfast {

std::string_view code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kLockTimeout:
      return "LOCK_TIMEOUT";
    case ErrorCode::kLockAccessDenied:
      return "LOCK_ACCESS_DENIED";
    case ErrorCode::kForbidden:
      return "FORBIDDEN";
    case ErrorCode::kRateLimited:
      return "RATE_LIMITED";
    case ErrorCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case ErrorCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case ErrorCode::kLockHeld:
      return "LOCK_HELD";
    case ErrorCode::kLockNotHolder:
      return "LOCK_NOT_HOLDER";
    case ErrorCode::kRulesetConflict:
      return "RULESET_CONFLICT";
    case ErrorCode::kUnavailable:
      return "UNAVAILABLE";
    case ErrorCode::kStoreUnavailable:
      return "STORE_UNAVAILABLE";
    case ErrorCode::kNotFound:
      return "NOT_FOUND";
    case ErrorCode::kMethodNotAllowed:
      return "METHOD_NOT_ALLOWED";
    case ErrorCode::kWrongType:
      return "WRONGTYPE";
    case ErrorCode::kInternal:
      return "INTERNAL";
  }
  return "INTERNAL";
}

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kLockTimeout:
      return 409;
    case ErrorCode::kLockAccessDenied:
      return 403;
    case ErrorCode::kForbidden:
      return 403;
    case ErrorCode::kRateLimited:
      return 429;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kLockHeld:
      return 409;
    case ErrorCode::kLockNotHolder:
      return 409;
    case ErrorCode::kRulesetConflict:
      return 409;
    case ErrorCode::kUnavailable:
    case ErrorCode::kStoreUnavailable:
      return 503;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kMethodNotAllowed:
      return 405;
    case ErrorCode::kWrongType:
      return 409;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

Error lock_timeout(std::string_view key, std::int64_t timeout_ms) {
  return Error(ErrorCode::kLockTimeout, "no grant within the timeout")
      .with("key", std::string(key))
      .with("timeoutMs", timeout_ms);
}

Error rate_limited(std::int64_t retry_after_ms) {
  return Error(ErrorCode::kRateLimited, "too many acquire attempts; try again later")
      .with("retryAfterMs", retry_after_ms);
}

Error lock_held(std::string_view key) {
  return Error(ErrorCode::kLockHeld, "the key is held by another holder")
      .with("key", std::string(key));
}

Error recovering_error(std::int64_t until_ms) {
  return Error(ErrorCode::kUnavailable,
               "recovering after an unclean stop: nothing new is granted until every lease the "
               "last run may have answered has ended")
      .with("recoveringUntil", until_ms);
}

Error not_holder(std::string_view key, std::string_view why) {
  return Error(ErrorCode::kLockNotHolder, std::string(why)).with("key", std::string(key));
}

}  // namespace holdfast
