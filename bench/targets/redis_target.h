// Redis as a lock service, the way its documentation's single-instance recipe does it:
// acquire = SET key token NX PX ttl, release = compare-and-delete in a Lua script (EVALSHA).
// Two configurations: no persistence at all, and an append-only file fsynced before every
// reply (appendfsync always), Redis's durable mode. With `tls` (the target redis-tls): no
// persistence, and clients served over TLS only (--port 0 --tls-port), with a certificate made
// for the run and no client certificates asked for.
#pragma once

#include <memory>

#include "../target.h"

namespace holdfast::bench {

enum class RedisPersistence : std::uint8_t { kNone, kAofAlways };

std::unique_ptr<Target> make_redis_target(RedisPersistence persistence, bool tls = false);

}  // namespace holdfast::bench
