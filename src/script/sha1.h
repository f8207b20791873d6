// SHA-1 as Redis names scripts: 40 lower-case hex digits of the script's body (EVALSHA,
// SCRIPT LOAD, redis.sha1hex). Not a security boundary: a name, as in Redis.
#pragma once

#include <string>
#include <string_view>

namespace holdfast::script {

std::string sha1_hex(std::string_view data);

}  // namespace holdfast::script
