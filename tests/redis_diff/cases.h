// The case files of the differential test (tests/redis_diff/cases/*.txt), one command a line:
//
//   # a comment                     ignored, as are blank lines
//   == <name>                       starts a case; its commands run in order on one connection
//   ZADD {k} NX 1 "a b"             words; "..." with \" \\ \r \n \xNN escapes, '...' as it is;
//                                   {k}, {k2} ... {k9} are keys of the case's own
//   ~ PTTL {k}                      integer replies may differ by up to 2000 (a time left)
//   ^ EVAL ...                      Redis's error may go on after Holdfast's: Redis 7 appends
//                                   " script: <sha1>, on @user_script:<line>." to an error a
//                                   script's redis.call raised, Holdfast does not
//   !sleep 30                       waits 30 ms (an expiry that must pass on both servers)
//   !requires PUBLISH               the case runs only where the server knows that command
//   !script <name> ... !end         a script body, used as the word $<name> (file-wide)
//   SET {k} v => -WRONGTYPE ...     the reply it must be (files run against Holdfast alone:
//                                   what Holdfast answers differently from Redis, on purpose)
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace holdfast::testing {

struct CaseLine {
  int line_number = 0;
  std::vector<std::string> args;
  bool approximate = false;
  bool prefix = false;  // ^: Holdfast's reply may be a prefix of Redis's
  int sleep_ms = 0;     // a !sleep line: no command
  std::optional<std::string> expected;
};

struct DiffCase {
  std::string file;  // the file's stem: "zsets"
  std::string name;
  std::vector<std::string> requires_commands;
  std::vector<CaseLine> lines;
};

// Every case of the file; throws std::runtime_error naming the file and line of a mistake.
std::vector<DiffCase> load_cases(const std::string& path);

// `word` with {k}, {k2} ... {k9} replaced by keys under `prefix`.
std::string with_keys(const std::string& word, const std::string& prefix);

}  // namespace holdfast::testing
