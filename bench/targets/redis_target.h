// Redis as a lock service, the way its documentation's single-instance recipe does it:
// acquire = SET key token NX PX ttl, release = compare-and-delete in a Lua script (EVALSHA).
// Two configurations: no persistence at all, and an append-only file fsynced before every
// reply (appendfsync always), Redis's durable mode. With `tls` (the target redis-tls): no
// persistence, and clients served over TLS only (--port 0 --tls-port), with a certificate made
// for the run and no client certificates asked for. As redis-sem and redis-sem-aof, the same
// two configurations serve redis-semaphore's Semaphore instead (targets/resp_client.h).
#pragma once

#include <memory>

#include "../target.h"
#include "resp_client.h"

namespace holdfast::bench {

enum class RedisPersistence : std::uint8_t { kNone, kAofAlways };

// `dialect` kRedis (the targets above) or kSemaphore (redis-sem, redis-sem-aof: redis-semaphore's
// Semaphore, `holders` per key; resp_client.h).
std::unique_ptr<Target> make_redis_target(RedisPersistence persistence, bool tls = false,
                                          RespDialect dialect = RespDialect::kRedis,
                                          std::uint32_t holders = 1);

}  // namespace holdfast::bench
