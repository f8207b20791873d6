#include "server/active_clients.h"

#include <gtest/gtest.h>

#include <vector>

namespace holdfast {
namespace {

TEST(ActiveClients, NobodyHasSentAnything) { EXPECT_EQ(ActiveClients().count(), 0u); }

TEST(ActiveClients, CountsTheClientsThatSendAndNotTheIdleOnes) {
  ActiveClients active;
  // 64 clients with one request in flight each take turns; 36 more never send.
  std::vector<ActiveClients::Stamp> busy(64), idle(36);
  for (int turn = 0; turn < 100; ++turn)
    for (auto& stamp : busy) {
      active.sent(stamp);
      EXPECT_LE(active.count(), busy.size());
    }
  EXPECT_EQ(active.count(), 64u);
}

TEST(ActiveClients, AClientThatStopsSendingIsNoLongerCounted) {
  ActiveClients active;
  std::vector<ActiveClients::Stamp> clients(16);
  for (int turn = 0; turn < 50; ++turn)
    for (auto& stamp : clients) active.sent(stamp);
  EXPECT_EQ(active.count(), 16u);
  // Four of them go quiet: two whole epochs later they are out.
  for (int turn = 0; turn < 50; ++turn)
    for (std::size_t i = 4; i < clients.size(); ++i) active.sent(clients[i]);
  EXPECT_EQ(active.count(), 12u);
}

TEST(ActiveClients, AFasterClientDoesNotPushTheOthersOut) {
  ActiveClients active;
  std::vector<ActiveClients::Stamp> clients(63);
  ActiveClients::Stamp fast;
  for (int turn = 0; turn < 100; ++turn)
    for (auto& stamp : clients) {
      active.sent(stamp);
      if (&stamp - clients.data() < 10) active.sent(fast);  // ten reads to their one
    }
  EXPECT_EQ(active.count(), 64u);
}

}  // namespace
}  // namespace holdfast
