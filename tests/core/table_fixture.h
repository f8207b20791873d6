// Shared set-up for lock table tests: a fake clock, a recording change sink, and shorthands.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/lock_table.h"

namespace holdfast::testing {

class RecordingSink : public ChangeSink {
 public:
  void on_change(const Change& change) override { changes.push_back(change); }
  std::vector<Change> changes;
};

class TableTest : public ::testing::Test {
 protected:
  FakeClock clock;
  RecordingSink sink;
  LockTable table{&sink};

  Millis now() const { return clock.now_ms(); }

  AcquireRequest req(std::string_view key, Millis ttl = 1000, Millis timeout = 0,
                     std::string_view held_by = "user:alice") {
    AcquireRequest r;
    r.key = key;
    r.ttl_ms = ttl;
    r.timeout_ms = timeout;
    r.held_by = held_by;
    r.session = 1;
    return r;
  }

  HoldState take(std::string_view key, Millis ttl = 1000, std::string_view held_by = "user:alice") {
    auto out = table.acquire(req(key, ttl, 0, held_by), now());
    EXPECT_TRUE(out.ok());
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kGranted);
    return out->hold;
  }

  WaiterId wait(std::string_view key, Millis timeout, SessionId session = 2,
                std::string_view held_by = "user:bob") {
    auto r = req(key, 1000, timeout, held_by);
    r.session = session;
    auto out = table.acquire(r, now());
    EXPECT_TRUE(out.ok());
    EXPECT_EQ(out->kind, AcquireOutcome::Kind::kQueued);
    return out->waiter;
  }

  void tick(Millis ms) {
    clock.advance(ms);
    table.advance(now());
  }
};

}  // namespace holdfast::testing
