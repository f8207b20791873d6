// The hot path allocates nothing per command beyond the lock table's own entry: a LOCK.TRY
// and LOCK.RELEASE pair through a connection's pipeline (command table, option parser, call
// runner, policy, embedded backend, reply queue, rendering) in steady state; and the Redis
// idiom's pair (SET NX PX, EVALSHA of compare-and-delete) only what its value needs. Counted
// by replacing the global operator new for this test binary (counting only on the thread that
// asks for it; the Lua state's own allocator is not counted).
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "core/clock.h"
#include "script/engine.h"
#include "script/sha1.h"
#include "server/resp/pipeline.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
#include "store/memory_store.h"

// The replacement pairs malloc with free by design; GCC cannot see that new and delete are both
// replaced here.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local bool counting = false;
thread_local std::uint64_t allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace holdfast::resp {
namespace {

struct Quiet final : Pipeline::Events {
  void replies_ready() override {}
  void resume() override {}
  void keep_alive(bool) override {}
};

// The handle of the last hold map in `out`.
std::string last_handle(const std::string& out) {
  const std::string marker = "$6\r\nhandle\r\n$26\r\n";
  const std::size_t at = out.rfind(marker);
  return at == std::string::npos ? std::string() : out.substr(at + marker.size(), 26);
}

TEST(CallAllocations, ATryAndReleasePairAllocatesOnlyTheTablesEntry) {
  FakeClock clock;
  MemoryStore store;
  EmbeddedBackend backend(clock, store);
  Policy policy(backend, clock);
  ASSERT_TRUE(backend.recover().ok());
  const ServerInfo info{"test", false};
  const Pipeline::Env env{policy, info, nullptr, nullptr};
  Quiet events;
  Pipeline pipeline(env, 1, events);

  // A hold that stays: the table interns each principal while it holds something, as it does
  // under any real load.
  const std::array<std::string_view, 4> keep = {"LOCK.TRY", "kept", "TTL", "600000"};
  pipeline.run(keep);
  pipeline.output().clear();
  const std::vector<std::string> keys = {"jobs:1", "jobs:2", "jobs:3", "jobs:4"};
  std::string handle;
  const auto pair = [&](const std::string& key) {
    const std::array<std::string_view, 4> try_args = {"LOCK.TRY", key, "TTL", "60000"};
    pipeline.run(try_args);
    counting = false;  // finding the handle in the reply is the test's own work
    handle = last_handle(pipeline.output());
    counting = true;
    const std::array<std::string_view, 3> release_args = {"LOCK.RELEASE", key, handle};
    pipeline.run(release_args);
    policy.dispatch();
    pipeline.output().clear();
  };
  for (int round = 0; round < 50; ++round)
    for (const auto& k : keys) pair(k);  // warm up: buffers, rings, interned principals
  ASSERT_FALSE(handle.empty());

  allocations = 0;
  counting = true;
  constexpr int kPairs = 400;
  for (int i = 0; i < kPairs; ++i) pair(keys[static_cast<std::size_t>(i) % keys.size()]);
  counting = false;
  // One per grant: the table's node for a key that is not held (its entry goes on release).
  EXPECT_LE(allocations, static_cast<std::uint64_t>(kPairs));
}

TEST(CallAllocations, TheRedisIdiomsPairAllocatesOnlyWhatItsValueNeeds) {
  FakeClock clock;
  MemoryStore store;
  EmbeddedBackend backend(clock, store);
  Policy policy(backend, clock);
  ASSERT_TRUE(backend.recover().ok());
  script::Engine engine;
  const ServerInfo info{"test", false};
  const Pipeline::Env env{policy, info, nullptr, nullptr, &engine};
  Quiet events;
  Pipeline pipeline(env, 1, events);

  const std::string_view release =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
      "else return 0 end";
  const std::array<std::string_view, 3> load = {"SCRIPT", "LOAD", release};
  pipeline.run(load);
  const std::string sha = script::sha1_hex(release);
  const std::array<std::string_view, 4> keep = {"SET", "kept", "a-value-of-22-chars-xx", "PX"};
  const std::array<std::string_view, 5> keep_px = {keep[0], keep[1], keep[2], keep[3], "600000"};
  pipeline.run(keep_px);
  pipeline.output().clear();
  const std::vector<std::string> keys = {"jobs:1", "jobs:2", "jobs:3", "jobs:4"};
  const std::string token = "tok-0123456789abcdefgh";  // 22 characters, as the bench's
  const auto pair = [&](const std::string& key) {
    const std::array<std::string_view, 6> set = {"SET", key, token, "NX", "PX", "60000"};
    pipeline.run(set);
    const std::array<std::string_view, 5> del = {"EVALSHA", sha, "1", key, token};
    pipeline.run(del);
    policy.dispatch();
  };
  for (int round = 0; round < 50; ++round)
    for (const auto& k : keys) pair(k);  // warm up
  ASSERT_EQ(pipeline.output().substr(pipeline.output().size() - 9), "+OK\r\n:1\r\n");
  pipeline.output().clear();

  allocations = 0;
  counting = true;
  constexpr int kPairs = 400;
  for (int i = 0; i < kPairs; ++i) pair(keys[static_cast<std::size_t>(i) % keys.size()]);
  counting = false;
  EXPECT_EQ(pipeline.output().size(), kPairs * std::string_view("+OK\r\n:1\r\n").size());
  // Per pair: the table's node for the key, the hold's extra fields and its value (SET); the
  // value copied into the grant the log records, and into the answer of the script's GET. And
  // a few buffers that grow once.
  EXPECT_LE(allocations, static_cast<std::uint64_t>(5 * kPairs + 16)) << allocations;
}

}  // namespace
}  // namespace holdfast::resp
