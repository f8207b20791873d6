#include "core/duration.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace holdfast {
namespace {

Millis ms_of(std::string_view text) {
  auto r = parse_duration(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : -1;
}

std::string error_of(std::string_view text) {
  auto r = parse_duration(text);
  if (r.ok()) {
    ADD_FAILURE() << text << " was accepted as " << *r;
    return "";
  }
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  return r.error().message;
}

TEST(Duration, APlainNumberIsMilliseconds) {
  EXPECT_EQ(ms_of("0"), 0);
  EXPECT_EQ(ms_of("1500"), 1500);
  EXPECT_EQ(ms_of("007"), 7);
  EXPECT_EQ(ms_of("9223372036854775807"), std::numeric_limits<Millis>::max());
}

TEST(Duration, EachUnit) {
  EXPECT_EQ(ms_of("1500ms"), 1500);
  EXPECT_EQ(ms_of("30s"), 30'000);
  EXPECT_EQ(ms_of("5m"), 300'000);
  EXPECT_EQ(ms_of("2h"), 7'200'000);
  EXPECT_EQ(ms_of("24h"), 86'400'000);
  EXPECT_EQ(ms_of("0s"), 0);
}

TEST(Duration, ADecimalThatMakesWholeMillisecondsIsAccepted) {
  EXPECT_EQ(ms_of("1.5s"), 1500);
  EXPECT_EQ(ms_of("0.001s"), 1);
  EXPECT_EQ(ms_of("0.5m"), 30'000);
  EXPECT_EQ(ms_of("1.25h"), 4'500'000);
  EXPECT_EQ(ms_of("0.0000025h"), 9);
  EXPECT_EQ(ms_of("2.000000000000000000000s"), 2000) << "trailing zeros change nothing";
}

TEST(Duration, ADecimalBelowAMillisecondIsRefused) {
  EXPECT_EQ(error_of("1.5ms"), "\"1.5ms\" is not a whole number of milliseconds");
  EXPECT_EQ(error_of("0.0001s"), "\"0.0001s\" is not a whole number of milliseconds");
  EXPECT_EQ(error_of("0.00000001h"), "\"0.00000001h\" is not a whole number of milliseconds");
  EXPECT_EQ(error_of("1.0000000000000000001s"),
            "\"1.0000000000000000001s\" is not a whole number of milliseconds");
  EXPECT_EQ(error_of("1.5"),
            "\"1.5\" is not a whole number of milliseconds (use a whole number of milliseconds, "
            "or units ms, s, m, h: 1500ms, 30s, 5m, 2h)")
      << "a plain number is milliseconds";
}

TEST(Duration, WhatIsNotADurationSaysHowToWriteOne) {
  for (const char* bad : {"", "30x", "soon", "s", "ms", ".5s", "5.s", "+5", " 5", "5 s", "5S",
                          "5sec", "1m30s", "1e3", "0x10", "5s ", "1,5s", "٣s"}) {
    EXPECT_EQ(error_of(bad),
              "\"" + std::string(bad) +
                  "\" is not a duration (use a whole number of milliseconds, or units ms, s, m, "
                  "h: 1500ms, 30s, 5m, 2h)")
        << bad;
  }
}

TEST(Duration, NegativesAreRefused) {
  EXPECT_EQ(error_of("-1"), "\"-1\" is negative: a duration is 0 or more");
  EXPECT_EQ(error_of("-5s"), "\"-5s\" is negative: a duration is 0 or more");
}

TEST(Duration, OverflowIsRefused) {
  EXPECT_EQ(error_of("9223372036854775808"), "\"9223372036854775808\" is too long");
  EXPECT_EQ(error_of("2562047788016h"), "\"2562047788016h\" is too long");
  EXPECT_EQ(ms_of("2562047788015h"), Millis{2562047788015} * 3'600'000);
  EXPECT_EQ(error_of("9223372036854775.808s"), "\"9223372036854775.808s\" is too long")
      << "the whole part fits, the fraction tips it over";
  EXPECT_EQ(ms_of("9223372036854775.807s"), std::numeric_limits<Millis>::max());
}

TEST(Duration, MicrosecondsAddTheUnitUsAndCountAPlainNumberInIt) {
  for (const auto& [text, us] :
       std::vector<std::pair<std::string_view, std::int64_t>>{{"0", 0},
                                                              {"250", 250},
                                                              {"250us", 250},
                                                              {"2ms", 2000},
                                                              {"1.5ms", 1500},
                                                              {"0.000001s", 1},
                                                              {"3s", 3'000'000},
                                                              {"2m", 120'000'000},
                                                              {"1h", 3'600'000'000}}) {
    auto r = parse_duration_us(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(*r, us) << text;
  }
  const std::string hint = "(use a whole number of microseconds, or units us, ms, s: 500us, 2ms)";
  EXPECT_EQ(parse_duration_us("1.5us").error().message,
            "\"1.5us\" is not a whole number of microseconds");
  EXPECT_EQ(parse_duration_us("1.5").error().message,
            "\"1.5\" is not a whole number of microseconds " + hint);
  EXPECT_EQ(parse_duration_us("5x").error().message, "\"5x\" is not a duration " + hint);
  EXPECT_EQ(parse_duration_us("5µs").error().message, "\"5µs\" is not a duration " + hint);
  EXPECT_EQ(parse_duration_us("-5us").error().message,
            "\"-5us\" is negative: a duration is 0 or more");
  EXPECT_EQ(parse_duration_us("9223372036854776s").error().message,
            "\"9223372036854776s\" is too long");
  EXPECT_FALSE(parse_duration("5us").ok()) << "us is only for the settings in microseconds";
}

TEST(Duration, FormatPicksTheLargestExactUnit) {
  EXPECT_EQ(format_duration(0), "0ms");
  EXPECT_EQ(format_duration(1500), "1500ms");
  EXPECT_EQ(format_duration(30'000), "30s");
  EXPECT_EQ(format_duration(90'000), "90s");
  EXPECT_EQ(format_duration(300'000), "5m");
  EXPECT_EQ(format_duration(7'200'000), "2h");
  EXPECT_EQ(format_duration(86'400'000), "24h");
  for (Millis ms : {Millis{0}, Millis{1}, Millis{999}, Millis{61'000}, Millis{3'600'001},
                    Millis{86'400'000}, std::numeric_limits<Millis>::max()})
    EXPECT_EQ(ms_of(format_duration(ms)), ms) << "reads back: " << format_duration(ms);
}

}  // namespace
}  // namespace holdfast
