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

// Fed ever longer prefixes of a stream, one framer must find the end of the first reply exactly
// where parse_reply() does, and never before.
void expect_framer_agrees_with_the_parser(const std::string& stream) {
  SCOPED_TRACE(stream);
  ReplyFramer framer;
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    const std::string_view prefix = std::string_view(stream).substr(0, cut);
    const auto parsed = parse_reply(prefix);
    const std::size_t length = framer.complete_length(prefix);
    if (!parsed) {
      ASSERT_EQ(length, 0u) << "cut " << cut;
      continue;
    }
    ASSERT_EQ(length, parsed->consumed) << "cut " << cut;
    framer.reset();  // as the connection does once it has taken the reply out
    return;
  }
  FAIL() << "no complete reply in the stream";
}

TEST(ReplyFramer, FindsTheEndOfEveryKindOfReplyWhereTheParserDoes) {
  for (const char* stream : {
           "+PONG\r\n+NEXT\r\n",
           "-LOCK_TIMEOUT no grant\r\n",
           ":42\r\n",
           "_\r\n",
           "#t\r\n",
           ",1.5\r\n",
           "(123456789012345678901234567890\r\n",
           "$3\r\nabc\r\n:1\r\n",
           "$0\r\n\r\n",
           "$-1\r\n",
           "*-1\r\n",
           "*0\r\n+after\r\n",
           "%0\r\n",
           "=8\r\ntxt:abcd\r\n",
           "!5\r\nERR x\r\n",
           "*2\r\n$8\r\nreleased\r\n:1\r\n+NEXT\r\n",
           "%2\r\n$3\r\nkey\r\n$1\r\nk\r\n$5\r\ntoken\r\n:42\r\n",
           "*2\r\n$1\r\n0\r\n*2\r\n%1\r\n+a\r\n*0\r\n%1\r\n+b\r\n$-1\r\n",
           "~2\r\n:1\r\n:2\r\n>1\r\n+x\r\n",
           "|1\r\n+a\r\n:1\r\n+real\r\n",
           "|0\r\n+real\r\n",
           "*2\r\n|1\r\n+a\r\n:1\r\n+first\r\n|1\r\n+b\r\n*1\r\n:2\r\n+second\r\n",
           "$4\r\na\r\nb\r\n+NEXT\r\n",  // CRLF inside a bulk string is data
       }) {
    expect_framer_agrees_with_the_parser(stream);
  }
}

TEST(ReplyFramer, ALargePageGrowingInPiecesIsFramedOnceItIsWhole) {
  std::string page = "*2\r\n$1\r\n0\r\n*10000\r\n";
  for (int i = 0; i < 10000; ++i) {
    const std::string key = "list/" + std::to_string(i);
    page += "%2\r\n$3\r\nkey\r\n$" + std::to_string(key.size()) + "\r\n" + key +
            "\r\n$5\r\ntoken\r\n:" + std::to_string(i) + "\r\n";
  }
  const std::string stream = page + "+PONG\r\n";
  ReplyFramer framer;
  std::size_t found = 0;
  for (std::size_t cut = 1000; found == 0; cut = std::min(cut + 1000, stream.size())) {
    found = framer.complete_length(std::string_view(stream).substr(0, cut));
    if (found == 0) {
      ASSERT_LT(cut, page.size());
    }
  }
  EXPECT_EQ(found, page.size());
  auto parsed = parse_reply(std::string_view(stream).substr(0, found));
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->reply.items.size(), 2u);
  EXPECT_EQ(parsed->reply.items[1].items.size(), 10000u);
  framer.reset();
  EXPECT_EQ(framer.complete_length(std::string_view(stream).substr(found)), 7u);
}

TEST(ReplyFramer, FramingThatNoReplyHasThrowsProtocolError) {
  for (const char* stream : {"?what\r\n", "$-5\r\n", "*-2\r\n", "%-1\r\n", "$x\r\n",
                             "*99999999\r\n", "$999999999999\r\n"}) {
    ReplyFramer framer;
    EXPECT_THROW(framer.complete_length(stream), ProtocolError) << stream;
  }
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "*1\r\n";
  ReplyFramer framer;
  EXPECT_THROW(framer.complete_length(deep + ":1\r\n"), ProtocolError);
  ReplyFramer endless;
  EXPECT_THROW(endless.complete_length("+" + std::string(70 * 1024, 'x')), ProtocolError);
}

}  // namespace
}  // namespace holdfast::client_internal
