/* Evaluating the common rule shapes performs no heap allocation (DESIGN.md: "evaluation
 * allocates nothing in the common case"). This file replaces the global operator new of the
 * test binary with a counting one; only the counts taken inside a test are inspected.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "cel_test_util.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace holdfast::cel {
namespace {

long allocations_during(const Program& program, const Activation& activation, bool& result) {
  const long before = g_allocations.load();
  auto value = program.evaluate(activation);
  const long after = g_allocations.load();
  result = value.ok() && value->is(ValueKind::kBool) && value->as_bool();
  return after - before;
}

Activation server_activation() {
  Activation activation;
  activation.bind("user", testing::string_map({{"userId", "a-rather-long-user-identifier-0001"},
                                               {"role", "member"}}));
  activation.bind("record",
                  testing::string_map({{"key", "user:a-rather-long-user-identifier-0001:lock"}}));
  activation.bind_function("isMemberOf", [](std::span<const Value> args) -> Result<Value> {
    return Value::from_bool(args.size() == 2 && args[0].is(ValueKind::kString) &&
                            args[0].as_string() == "ops");
  });
  return activation;
}

TEST(Allocation, SeedRulesEvaluateWithoutHeapAllocation) {
  const Activation activation = server_activation();
  for (const char* rule :
       {"record.key.startsWith('user:' + user.userId + ':')", "isMemberOf('ops', 'core')",
        "user.role == 'admin' || record.key.endsWith(':lock') && has(user.userId)"}) {
    const auto program = compile(rule);
    ASSERT_TRUE(program.ok()) << program.error().message;
    bool allowed = false;
    EXPECT_EQ(allocations_during(*program, activation, allowed), 0) << rule;
    EXPECT_TRUE(allowed) << rule;
  }
}

TEST(Allocation, CounterSeesAllocations) {
  // Guards the test above: a concatenation that becomes a value must be counted.
  const auto program = compile("('user:' + user.userId).size() > 0");
  ASSERT_TRUE(program.ok());
  bool result = false;
  EXPECT_GT(allocations_during(*program, server_activation(), result), 0);
  EXPECT_TRUE(result);
}

}  // namespace
}  // namespace holdfast::cel
