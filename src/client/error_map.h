// From a RESP error line to the typed exceptions of include/holdfast/errors.h.
//
// docs/reference.md section 8: the first word is the code; the rest is a human message followed by
// details as name=value words, values JSON-quoted when they hold spaces, quotes or '='. The details
// are the longest run of name=value words at the end of the line, so a message word that happens to
// hold '=' stays in the message unless every word after it is a detail too.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace holdfast::inline v0::client_internal {

struct ServerErrorText {
  std::string code;     // "LOCK_TIMEOUT", "ERR", ...
  std::string message;  // without the code and the details
  std::map<std::string, std::string> details;
};

ServerErrorText parse_error_line(std::string_view line);

// Throws the exception for the error line: LockTimeoutError, RateLimitedError (retry_after from
// retryAfterMs), AccessDeniedError, ... and plain holdfast::Error for codes it does not know
// (e.g. ERR, NOPROTO). what() is the whole line, so nothing the server said is lost.
[[noreturn]] void throw_server_error(std::string_view line);

}  // namespace holdfast::inline v0::client_internal
