// The workloads' per-connection behaviour, one worker class per workload. Each is a small
// state machine driven by replies (and, for retry loops, timers); see each class.
#pragma once

#include <cstdint>

#include "measurement.h"

namespace holdfast::bench {

// Lock numbers of the workloads, far apart so that no two workloads share a lock on a server
// that runs them one after another.
inline constexpr std::uint64_t kPairsFirstLock = 0;                 // (a): [0, keys)
inline constexpr std::uint64_t kHotLock = 900'000'000'000;          // (b)
inline constexpr std::uint64_t kPipelineFirstLock = 1'000'000'000;  // (c): random above this
inline constexpr std::uint64_t kHoldsFirstLock = 100'000'000;       // (d), (e)
inline constexpr std::uint64_t kSharedLock = 910'000'000'000;       // (i) readers and writers
inline constexpr std::uint64_t kSemaphoreLock = 920'000'000'000;    // (i) semaphore

struct PairsParams {
  std::uint64_t keys = 10'000;
  std::uint32_t ttl_ms = 10'000;
};
// (a) try-acquire a random lock of `keys`; if granted, release it: one pair. A lock found held
// (another connection has it right now) counts as busy and the worker draws another.
// Latency: from the try being queued to the release's reply.
WorkerFactory pairs_worker(PairsParams params);

// (f) PING, then PING: two round trips that do nothing, the ceiling of any two-request
// workload on this client and this loopback.
WorkerFactory ping_pair_worker();

struct HotKeyParams {
  bool blocking = false;  // server-side FIFO wait (Holdfast) instead of a retry loop
  std::uint32_t ttl_ms = 10'000;
  std::uint32_t timeout_ms = 10'000;
  std::int64_t backoff_min_ns = 1'000'000;
  std::int64_t backoff_max_ns = 32'000'000;
  std::int64_t think_ns = 1'000'000;  // retry loops only
};
// (b) Critical sections back to back on one lock. Blocking: LOCK.ACQUIRE, then release, then
// the next LOCK.ACQUIRE as soon as the release is answered.
// Retry loop: try; if busy sleep a jittered backoff (uniform in [b/2, b], b doubling from
// backoff_min to backoff_max) and try again; if granted, release. After each release reply
// a retry-loop worker pauses a jittered `think` time before its next attempt: without it the
// connection that just released is the only one awake and takes the lock again at once, and
// the count measures one connection, not 64 contending ones. A blocking worker needs no such
// pause (the FIFO puts it behind the others) and does not take it: the pause would change
// nothing but the harness's own cost (a timer wake-up per section). Every worker starts after
// a jittered think time, so 64 connections do not arrive as one burst. The critical section
// lasts from the grant reply until the release leaves in the same loop iteration.
// Latency: from the first attempt to the grant (the wait for the lock).
WorkerFactory hot_key_worker(HotKeyParams params);

struct KindParams {
  // kShared: readers and writers on kSharedLock, connection i a writer when i % writer_every
  // is 0 (writer_every 8: one in eight). kSemaphore: every connection takes `take` of the
  // `permits` permits of kSemaphoreLock.
  enum class Kind : std::uint8_t { kShared, kSemaphore };
  Kind kind = Kind::kShared;
  int writer_every = 8;
  std::uint32_t permits = 8;
  std::uint32_t take = 1;
  std::uint32_t ttl_ms = 10'000;
  std::uint32_t timeout_ms = 10'000;
};
// (i) Holdfast's other lock kinds on one hot key, each connection a blocking worker as in (b):
// LOCK.ACQUIRE in its mode, release as soon as granted, ask again as soon as the release is
// answered. A reader's or a semaphore holder's section is a Recorder op, a writer's a writer
// op. Latency: from the first attempt to the grant. The checker holds the key to its mode:
// any number of readers or one writer; at most `permits` permits taken at once.
WorkerFactory kind_worker(KindParams params);

struct PipelineParams {
  int depth = 16;
  std::uint32_t ttl_ms = 1'000;
};
// (c) Keeps `depth` try-acquires of random, practically unique locks in flight; never
// releases (the holds expire after ttl_ms). Latency: per request, queued to reply.
WorkerFactory pipeline_worker(PipelineParams params);

}  // namespace holdfast::bench
