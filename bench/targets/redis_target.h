// Redis as a lock service, the way its documentation's single-instance recipe does it:
// acquire = SET key token NX PX ttl, release = compare-and-delete in a Lua script (EVALSHA).
// Two configurations: no persistence at all, and an append-only file fsynced before every
// reply (appendfsync always), Redis's durable mode.
#pragma once

#include <memory>

#include "../target.h"

namespace holdfast::bench {

enum class RedisPersistence : std::uint8_t { kNone, kAofAlways };

std::unique_ptr<Target> make_redis_target(RedisPersistence persistence);

}  // namespace holdfast::bench
