// Bad input gets a precise error, changes nothing, and never disturbs other connections.
// Protocol-level errors close only the offending connection.
#include <gtest/gtest.h>

#include <random>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class BadInput : public ::testing::Test {
 protected:
  ServerProcess server;
  RespClient bystander = server.client();

  void SetUp() override { bystander.call({"LOCK.TRY", "held", "TTL", "600000"}); }

  // The server still serves others and its state is as before.
  void expect_unchanged() {
    EXPECT_EQ(bystander.call({"PING"}).str, "PONG");
    auto s = bystander.call({"LOCK.STATUS", "held"});
    EXPECT_EQ(s.number("held"), 1);
    EXPECT_EQ(s.number("token"), 1);
    EXPECT_EQ(bystander.call({"LOCK.STATUS", "k"}).number("held"), 0);
  }
};

TEST_F(BadInput, CommandErrorsAreInvalidArgumentAndChangeNothing) {
  const std::string long_key(1025, 'k');
  const std::string long_owner(257, 'o');
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"LOCK.ACQUIRE", "k"}, "wrong number of arguments for 'LOCK.ACQUIRE'"},
      {{"LOCK.TRY", "k", "TTL"}, "wrong number of arguments"},
      {{"LOCK.RELEASE", "k"}, "wrong number of arguments for 'LOCK.RELEASE'"},
      {{"LOCK.TRY", "k", "TTL", "abc"}, "TTL must be an integer number of milliseconds"},
      {{"LOCK.TRY", "k", "TTL", "1e3"}, "TTL must be an integer"},
      {{"LOCK.TRY", "k", "TTL", "1000.0"}, "TTL must be an integer"},
      {{"LOCK.TRY", "k", "TTL", "99999999999999999999"}, "TTL must be an integer"},
      {{"LOCK.TRY", "k", "TTL", "0"}, "TTL must be a positive number"},
      {{"LOCK.TRY", "k", "TTL", "-5"}, "TTL must be a positive number"},
      {{"LOCK.ACQUIRE", "k", "TTL", "100", "TIMEOUT", "-1"}, "timeout must be zero or a positive"},
      {{"LOCK.ACQUIRE", "k", "TTL", "100", "OWNER", "x", "SESSION"}, "TIMEOUT is required"},
      {{"LOCK.TRY", "", "TTL", "1000"}, "key must not be empty"},
      {{"LOCK.TRY", long_key, "TTL", "1000"}, "key is longer than 1024 bytes"},
      {{"LOCK.TRY", "bad\x01key", "TTL", "1000"}, "key must be UTF-8 without control characters"},
      {{"LOCK.TRY", "k", "TTL", "1000", "OWNER", ""}, "owner must not be empty"},
      {{"LOCK.TRY", "k", "TTL", "1000", "OWNER", long_owner}, "owner is longer than 256 bytes"},
      {{"LOCK.TRY", "k", "TTL", "1000", "COLOR", "red"}, "unknown option 'COLOR' for LOCK.TRY"},
      {{"LOCK.TRY", "k", "TTL", "1000", "TTL", "5"}, "TTL given twice"},
      {{"LOCK.TRY", "k", "TTL", "1000", "OWNER"}, "OWNER needs a value"},
      {{"LOCK.RENEW", "k", "", "TTL", "5"}, "handle must not be empty"},
      {{"LOCK.LIST", "COUNT", "0"}, "COUNT must be a positive integer"},
      {{"LOCK.LIST", "CURSOR", "zz"}, "cursor is not one this server returned"},
  };
  auto c = server.client();
  for (const auto& [args, message] : cases) {
    auto r = c.call(args);
    ASSERT_TRUE(r.is_error()) << args[0] << " " << r.debug();
    EXPECT_EQ(r.error_code(), "INVALID_ARGUMENT") << r.str;
    EXPECT_NE(r.str.find(message), std::string::npos)
        << "got: " << r.str << "\nwanted: " << message;
  }
  expect_unchanged();
  EXPECT_EQ(c.call({"PING"}).str, "PONG");  // the same connection is still fine
}

TEST_F(BadInput, UnknownCommandIsAnErrNamingIt) {
  auto c = server.client();
  EXPECT_EQ(c.call({"FLUSHALL"}).str, "ERR unknown command 'FLUSHALL'");
  EXPECT_EQ(c.call({"lock.nope", "x"}).str, "ERR unknown command 'lock.nope'");
  expect_unchanged();
}

TEST_F(BadInput, GarbageBytesCloseOnlyThatConnection) {
  for (std::string garbage :
       {std::string("*abc\r\n"), std::string("*2\r\n:1\r\n"), std::string("*1\r\n$-5\r\n"),
        std::string("*1\r\n$3\r\nabcXY"), std::string("*99999999\r\n")}) {
    auto c = server.client();
    c.send_raw(garbage);
    auto r = c.read();
    EXPECT_EQ(r.str.rfind("ERR Protocol error: ", 0), 0u) << r.debug();
    EXPECT_TRUE(c.wait_closed()) << garbage;
    expect_unchanged();
  }
}

TEST_F(BadInput, AFrameOverTheSizeLimitIsAProtocolError) {
  auto c = server.client();
  c.send_raw("*3\r\n$8\r\nLOCK.TRY\r\n$2000000\r\n");
  auto r = c.read();
  EXPECT_EQ(r.str.rfind("ERR Protocol error: command is larger than", 0), 0u) << r.debug();
  EXPECT_TRUE(c.wait_closed());
  expect_unchanged();
}

TEST_F(BadInput, AnEndlessInlineLineIsAProtocolError) {
  auto c = server.client();
  c.send_raw(std::string(100000, 'A'));
  auto r = c.read();
  EXPECT_EQ(r.str, "ERR Protocol error: inline command too long");
  EXPECT_TRUE(c.wait_closed());
  expect_unchanged();
}

TEST_F(BadInput, RandomBytesNeverCrashTheServer) {
  std::mt19937 rng(11);
  for (int i = 0; i < 50; ++i) {
    auto c = server.client();
    std::string junk;
    for (int k = 0; k < 200; ++k) junk.push_back(static_cast<char>(rng() & 0xff));
    junk += "\r\n";
    c.send_raw(junk);
  }
  expect_unchanged();
}

TEST_F(BadInput, WrongHandlesAnswerNotHolderWithoutLeakingAnything) {
  auto c = server.client();
  auto r = c.call({"LOCK.RELEASE", "held", "01234567890123456789012345"});
  EXPECT_EQ(r.number("released"), 0);
  EXPECT_EQ(r.text("reason"), "not_holder");
  EXPECT_FALSE(r.has("handle"));
  expect_unchanged();
}

}  // namespace
}  // namespace holdfast::testing
