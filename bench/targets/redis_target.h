// Redis as a lock service, the way its documentation's single-instance recipe does it:
// acquire = SET key token NX PX ttl, release = compare-and-delete in a Lua script (EVALSHA);
// or, as redis-sem*, redis-semaphore's Semaphore.
// Two configurations: no persistence at all, and an append-only file fsynced before every
// reply (appendfsync always), Redis's durable mode.
#pragma once

#include <memory>

#include "../target.h"
#include "resp_client.h"

namespace holdfast::bench {

enum class RedisPersistence : std::uint8_t { kNone, kAofAlways };

// `dialect` kRedis (the targets redis, redis-aof) or kSemaphore (redis-sem, redis-sem-aof:
// redis-semaphore's Semaphore, `holders` per key; resp_client.h).
std::unique_ptr<Target> make_redis_target(RedisPersistence persistence,
                                          RespDialect dialect = RespDialect::kRedis,
                                          std::uint32_t holders = 1);

}  // namespace holdfast::bench
