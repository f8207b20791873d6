// The client's RESP codec: encoding, both protocol versions, partial input, malformed input.
#include <gtest/gtest.h>

#include "client/resp_codec.h"
#include "holdfast/errors.h"

namespace holdfast::client_internal {
namespace {

TEST(RespCodec, EncodesCommandsAsArraysOfBulkStrings) {
  EXPECT_EQ(encode_command({"LOCK.TRY", "a b", ""}),
            "*3\r\n$8\r\nLOCK.TRY\r\n$3\r\na b\r\n$0\r\n\r\n");
}

TEST(RespCodec, ParsesResp3MapsAndFieldLookup) {
  auto out = parse_reply("%2\r\n$3\r\nkey\r\n$1\r\nk\r\n$5\r\ntoken\r\n:42\r\n");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->reply.type, Reply::Type::kMap);
  EXPECT_EQ(out->reply.field("key")->str, "k");
  EXPECT_EQ(out->reply.field("token")->integer, 42);
  EXPECT_EQ(out->reply.field("absent"), nullptr);
}

TEST(RespCodec, ParsesResp2FlatArraysAsFieldLists) {
  auto out = parse_reply("*2\r\n$8\r\nreleased\r\n:1\r\n");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->reply.field("released")->integer, 1);
}

TEST(RespCodec, NullsOfBothVersions) {
  EXPECT_TRUE(parse_reply("_\r\n")->reply.is_null());
  EXPECT_TRUE(parse_reply("$-1\r\n")->reply.is_null());
  EXPECT_TRUE(parse_reply("*-1\r\n")->reply.is_null());
}

TEST(RespCodec, ScalarsAndErrors) {
  EXPECT_EQ(parse_reply("+PONG\r\n")->reply.str, "PONG");
  auto err = parse_reply("-LOCK_TIMEOUT no grant key=k timeoutMs=5\r\n")->reply;
  EXPECT_TRUE(err.is_error());
  EXPECT_EQ(err.str, "LOCK_TIMEOUT no grant key=k timeoutMs=5");
  EXPECT_EQ(parse_reply("#t\r\n")->reply.integer, 1);
  EXPECT_EQ(parse_reply(",1.5\r\n")->reply.str, "1.5");
  EXPECT_EQ(parse_reply("=8\r\ntxt:abcd\r\n")->reply.str, "abcd");
  EXPECT_TRUE(parse_reply("!5\r\nERR x\r\n")->reply.is_error());
}

TEST(RespCodec, IncompleteInputAsksForMoreAndReportsConsumedBytes) {
  const std::string whole = "*2\r\n$3\r\nabc\r\n:7\r\n+NEXT\r\n";
  for (std::size_t cut = 0; cut < 17; ++cut) EXPECT_FALSE(parse_reply(whole.substr(0, cut))) << cut;
  auto out = parse_reply(whole);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->consumed, 17u);
  EXPECT_EQ(parse_reply(std::string_view(whole).substr(out->consumed))->reply.str, "NEXT");
}

TEST(RespCodec, AttributesAreSkipped) {
  auto out = parse_reply("|1\r\n+a\r\n:1\r\n+real\r\n");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->reply.str, "real");
}

TEST(RespCodec, MalformedInputThrowsProtocolError) {
  EXPECT_THROW(parse_reply("?what\r\n"), ProtocolError);
  EXPECT_THROW(parse_reply(":12x\r\n"), ProtocolError);
  EXPECT_THROW(parse_reply("$3\r\nabcXY"), ProtocolError);
  EXPECT_THROW(parse_reply("$-5\r\n"), ProtocolError);
  EXPECT_THROW(parse_reply("#x\r\n"), ProtocolError);
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "*1\r\n";
  EXPECT_THROW(parse_reply(deep + ":1\r\n"), ProtocolError);
}

}  // namespace
}  // namespace holdfast::client_internal
