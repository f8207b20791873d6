// The pub/sub registry (server/pubsub/registry.h): who gets a message, in which frame, how
// PUBLISH counts, and what PUBSUB sees. Redis's own replies are compared in
// tests/blackbox/pubsub_test.cc.
#include <gtest/gtest.h>

#include <algorithm>

#include "server/pubsub/registry.h"

namespace holdfast::pubsub {
namespace {

struct Sub final : Subscriber {
  explicit Sub(int p = 2) : protocol(p) {}
  int protocol;
  std::vector<std::string> frames;
  int proto() const override { return protocol; }
  void on_message(std::string_view frame) override { frames.emplace_back(frame); }
};

TEST(PubSubRegistry, ChannelsAndPatternsCountEveryDelivery) {
  Registry r;
  Sub a, b(3);
  EXPECT_TRUE(r.subscribe(a, "news"));
  EXPECT_FALSE(r.subscribe(a, "news"));
  EXPECT_TRUE(r.subscribe(b, "news"));
  EXPECT_TRUE(r.psubscribe(a, "n*"));
  EXPECT_EQ(r.publish("news", "hi"), 3);
  ASSERT_EQ(a.frames.size(), 2u);
  EXPECT_EQ(a.frames[0], "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_EQ(a.frames[1], "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  ASSERT_EQ(b.frames.size(), 1u);
  EXPECT_EQ(b.frames[0], ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_EQ(r.publish("other", "x"), 0);
  EXPECT_EQ(r.publish("nope", "x"), 1);  // the pattern n*
}

TEST(PubSubRegistry, UnsubscribingForgetsEmptyChannelsAndPatterns) {
  Registry r;
  Sub a, b;
  r.subscribe(a, "c1");
  r.subscribe(b, "c1");
  r.subscribe(a, "c2");
  r.psubscribe(a, "p*");
  EXPECT_EQ(r.numsub("c1"), 2u);
  EXPECT_EQ(r.numpat(), 1u);
  auto names = r.channels("");
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(r.channels("*2"), std::vector<std::string>{"c2"});
  EXPECT_TRUE(r.unsubscribe(a, "c2"));
  EXPECT_FALSE(r.unsubscribe(a, "c2"));
  EXPECT_EQ(r.channels(""), std::vector<std::string>{"c1"});
  EXPECT_TRUE(r.punsubscribe(a, "p*"));
  EXPECT_EQ(r.numpat(), 0u);
  EXPECT_EQ(r.stats().subscriptions, 2u);
}

TEST(PubSubRegistry, RelayGoesOutAndDeliverStaysHere) {
  Registry r;
  Sub a;
  r.subscribe(a, "c");
  std::vector<std::pair<std::string, std::string>> relayed;
  r.set_relay([&](std::string_view c, std::string_view m) { relayed.emplace_back(c, m); });
  EXPECT_EQ(r.publish("c", "1"), 1);
  EXPECT_EQ(r.deliver("c", "2"), 1);
  ASSERT_EQ(relayed.size(), 1u);
  EXPECT_EQ(relayed[0].second, "1");
  EXPECT_EQ(a.frames.size(), 2u);
  EXPECT_EQ(r.stats().messages, 2u);
  EXPECT_EQ(r.stats().deliveries, 2u);
}

TEST(PubSubRegistry, BinaryChannelsAndMessagesPassUntouched) {
  Registry r;
  Sub a;
  const std::string ch("a\0b", 3), msg("\r\n\0\xff", 4);
  r.subscribe(a, ch);
  EXPECT_EQ(r.publish(ch, msg), 1);
  EXPECT_EQ(a.frames.at(0), "*3\r\n$7\r\nmessage\r\n$3\r\n" + ch + "\r\n$4\r\n" + msg + "\r\n");
}

}  // namespace
}  // namespace holdfast::pubsub
