// A round of the loop ends even when work never stops arriving.
#include "server/loop_round.h"

#include <gtest/gtest.h>

#include <functional>

#include <boost/asio/post.hpp>

namespace holdfast {
namespace {

TEST(LoopRound, WorkThatKeepsArrivingStillEndsTheRound) {
  boost::asio::io_context io;
  std::size_t ran = 0;
  // Each handler posts the next, as a busy server's replies bring the next requests:
  // io_context::poll() would never return.
  std::function<void()> again = [&] {
    ++ran;
    boost::asio::post(io, again);
  };
  boost::asio::post(io, again);
  EXPECT_EQ(run_round(io, 100), 100u);
  EXPECT_EQ(ran, 100u);
  EXPECT_EQ(run_round(io), kRoundHandlers) << "the next round picks up where it stopped";
  EXPECT_EQ(ran, 100u + kRoundHandlers);
}

TEST(LoopRound, ARoundRunsWhatIsReadyAndNothingMore) {
  boost::asio::io_context io;
  int ran = 0;
  for (int i = 0; i < 3; ++i) boost::asio::post(io, [&] { ++ran; });
  EXPECT_EQ(run_round(io), 3u);
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(run_round(io), 0u) << "nothing ready: an empty round, no waiting";
}

}  // namespace
}  // namespace holdfast
