#include "server/resp/codec.h"

#include <gtest/gtest.h>

#include <limits>

namespace holdfast::resp {
namespace {

TEST(RequestParser, ParsesAMultibulkCommandAsViews) {
  RequestParser p;
  std::string in = "*3\r\n$8\r\nLOCK.TRY\r\n$1\r\nk\r\n$0\r\n\r\nrest";
  std::size_t used = 0;
  ASSERT_EQ(p.parse(in, &used), ParseStatus::kComplete);
  EXPECT_EQ(used, in.size() - 4);
  ASSERT_EQ(p.args().size(), 3u);
  EXPECT_EQ(p.args()[0], "LOCK.TRY");
  EXPECT_EQ(p.args()[1], "k");
  EXPECT_EQ(p.args()[2], "");
  EXPECT_EQ(p.args()[0].data(), in.data() + 8);
}

TEST(RequestParser, EveryPrefixOfAFrameIsIncomplete) {
  std::string in = "*2\r\n$4\r\nPING\r\n$5\r\nhello\r\n";
  RequestParser p;
  for (std::size_t n = 0; n < in.size(); ++n) {
    std::size_t used = 0;
    EXPECT_EQ(p.parse(std::string_view(in).substr(0, n), &used), ParseStatus::kIncomplete) << n;
  }
}

TEST(RequestParser, BinarySafeBulkStrings) {
  std::string in = std::string("*1\r\n$5\r\na\r\n\0b\r\n", 16);
  RequestParser p;
  std::size_t used = 0;
  ASSERT_EQ(p.parse(in, &used), ParseStatus::kComplete);
  EXPECT_EQ(p.args()[0], std::string_view("a\r\n\0b", 5));
}

TEST(RequestParser, InlineCommandsSplitOnSpaces) {
  RequestParser p;
  std::size_t used = 0;
  ASSERT_EQ(p.parse("LOCK.STATUS   k1\r\nPING\r\n", &used), ParseStatus::kComplete);
  ASSERT_EQ(p.args().size(), 2u);
  EXPECT_EQ(p.args()[1], "k1");
  EXPECT_EQ(used, 18u);
  ASSERT_EQ(p.parse("\r\n", &used), ParseStatus::kComplete);
  EXPECT_TRUE(p.args().empty());
}

TEST(RequestParser, MalformedFramesAreErrors) {
  for (const char* bad : {"*x\r\n", "*1\r\n:5\r\n", "*1\r\n$-2\r\n", "*1\r\n$3\r\nabcde",
                          "*1\r\n$abc\r\n", "*1\r\n$1\r\nxx\r\n"}) {
    RequestParser p;
    std::size_t used = 0;
    EXPECT_EQ(p.parse(bad, &used), ParseStatus::kError) << bad;
    EXPECT_FALSE(p.error().empty());
  }
}

TEST(RequestParser, LimitsAreEnforced) {
  ParserLimits limits;
  limits.max_frame_bytes = 100;
  limits.max_args = 2;
  limits.max_inline_bytes = 10;
  RequestParser p(limits);
  std::size_t used = 0;
  EXPECT_EQ(p.parse("*3\r\n", &used), ParseStatus::kError);
  EXPECT_EQ(p.parse("*1\r\n$101\r\n", &used), ParseStatus::kError);
  EXPECT_EQ(p.parse("a b c d e f g h i j k l", &used), ParseStatus::kError);
}

TEST(ReplyWriter, MapsAreMapsInResp3AndFlatArraysInResp2) {
  std::string out2, out3;
  ReplyWriter w2(out2, 2), w3(out3, 3);
  for (ReplyWriter* w : {&w2, &w3}) {
    w->map(2);
    w->field("renewed", 1);
    w->null_field("owner");
  }
  EXPECT_EQ(out2, "*4\r\n$7\r\nrenewed\r\n:1\r\n$5\r\nowner\r\n$-1\r\n");
  EXPECT_EQ(out3, "%2\r\n$7\r\nrenewed\r\n:1\r\n$5\r\nowner\r\n_\r\n");
}

TEST(ReplyWriter, BulkStringsOfEverySizeAreFramedAlike) {
  for (std::size_t n : {0u, 1u, 9u, 10u, 223u, 224u, 225u, 256u, 5000u}) {
    std::string body(n, 'x');
    if (n > 0) body[n - 1] = '\0';  // binary-safe: the length frames it, not a terminator
    std::string out = "?";
    ReplyWriter w(out, 3);
    w.bulk(body);
    EXPECT_EQ(out, "?$" + std::to_string(n) + "\r\n" + body + "\r\n") << n;
  }
}

TEST(ReplyWriter, MapEntriesOfEverySizeAreFramedAsTheirElements) {
  // Short entries are assembled in one piece, long ones element by element: the bytes agree.
  for (std::size_t n : {0u, 1u, 100u, 200u, 230u, 256u, 257u, 5000u}) {
    const std::string name(n % 7 + 1, 'n'), value(n, 'v');
    for (int proto : {2, 3}) {
      std::string out = "?";
      ReplyWriter w(out, proto);
      w.field(value.empty() ? name : value, std::numeric_limits<std::int64_t>::min());
      w.field(name, value);
      w.null_field(value.empty() ? name : value);
      const std::string first = value.empty() ? name : value;
      const auto bulk = [](const std::string& s) {
        return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
      };
      EXPECT_EQ(out, "?" + bulk(first) + ":-9223372036854775808\r\n" + bulk(name) + bulk(value) +
                         bulk(first) + (proto >= 3 ? "_\r\n" : "$-1\r\n"))
          << n << " " << proto;
    }
  }
}

TEST(ReplyWriter, ErrorLinesCannotSmuggleNewlines) {
  std::string out;
  ReplyWriter w(out, 2);
  w.error_line("ERR bad\r\n+OK");
  EXPECT_EQ(out, "-ERR bad  +OK\r\n");
}

}  // namespace
}  // namespace holdfast::resp
