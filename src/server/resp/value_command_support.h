// What the typed-value command files share: Redis's refusals of bad arguments.
#pragma once

#include <optional>
#include <string>

#include "core/values/redis_numbers.h"
#include "server/resp/ascii.h"
#include "server/resp/value_commands.h"

namespace holdfast::resp::value_cmd {

// "-ERR <message>": bad input, answered before the key is looked at, changing nothing.
inline Issued refuse(Completion& done, std::string message) {
  done.finish(invalid_argument(std::move(message)));
  return Issued::kApplied;
}
inline Issued syntax_error(Completion& done) { return refuse(done, "syntax error"); }
inline Issued not_an_integer(Completion& done) {
  return refuse(done, "value is not an integer or out of range");
}

}  // namespace holdfast::resp::value_cmd
