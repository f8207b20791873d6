// Session holds and a database outage longer than the session grace: no node could have
// heartbeated meanwhile, so nobody's silence counts, and every node has the full grace after
// the database is back (docs/scale-out.md, "Session holds"). A hold granted just after the
// outage is not freed either. A node that really died still loses its holds after the grace.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/eventually.h"
#include "support/postgres.h"
#include "support/server_process.h"
#include "support/wall_time.h"

namespace holdfast::testing {
namespace {

constexpr int kGraceMs = 1500;

TEST(SessionOutage, SessionHoldsOutliveADatabaseOutageLongerThanTheGrace) {
  TestPostgres pg;  // its own: this test stops it
  const std::string url = fresh_store_url(pg.url());
  const std::vector<std::string> flags = {"--store", url, "--session-grace-ms",
                                          std::to_string(kGraceMs)};
  ServerProcess one(flags);
  ServerProcess two(flags);
  auto a = one.client();
  const RespValue kept =
      a.call({"LOCK.ACQUIRE", "kept", "TTL", "600000", "TIMEOUT", "0", "SESSION"});
  ASSERT_FALSE(kept.is_error()) << kept.debug();

  pg.stop();
  pause_ms(2 * kGraceMs + 500);  // every heartbeat is older than the grace now
  pg.start_again();
  // A session hold granted through the other node as soon as the database answers.
  auto b = two.client();
  RespValue fresh;
  for (const auto until = std::chrono::steady_clock::now() + kEventually;
       std::chrono::steady_clock::now() < until;) {
    fresh = b.call({"LOCK.ACQUIRE", "fresh", "TTL", "600000", "TIMEOUT", "0", "SESSION"});
    if (!fresh.is_error()) break;
    pause_ms(25);
  }
  ASSERT_FALSE(fresh.is_error()) << fresh.debug();
  // Every node sweeps every few hundred milliseconds: give them twice the grace.
  pause_ms(2 * kGraceMs + 500);
  auto thief = two.client();
  EXPECT_TRUE(thief.call({"LOCK.TRY", "kept", "TTL", "1000"}).is_null())
      << "a session hold of a live node was freed after the outage";
  auto other_thief = one.client();
  EXPECT_TRUE(other_thief.call({"LOCK.TRY", "fresh", "TTL", "1000"}).is_null())
      << "a session hold granted after the outage was freed";
  const RespValue status = a.call({"LOCK.STATUS", "kept"});
  EXPECT_EQ(status.number("token"), kept.number("token")) << status.debug();

  // The rule still frees what it must: node one dies, and after the grace its hold goes.
  one.kill9();
  RespValue taken;
  for (const auto until = std::chrono::steady_clock::now() + kEventually;
       std::chrono::steady_clock::now() < until;) {
    taken = thief.call({"LOCK.TRY", "kept", "TTL", "1000"});
    if (!taken.is_null() && !taken.is_error()) break;
    pause_ms(50);
  }
  EXPECT_FALSE(taken.is_null() || taken.is_error())
      << "the session hold of a dead node was never freed: " << taken.debug();
}

}  // namespace
}  // namespace holdfast::testing
