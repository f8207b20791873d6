#include "core/glob.h"

#include <gtest/gtest.h>

namespace holdfast {
namespace {

TEST(Glob, StarMatchesAnyRun) {
  EXPECT_TRUE(glob_match("user:*", "user:alice:1"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*:1", "user:alice:1"));
  EXPECT_FALSE(glob_match("user:*", "jobs:nightly"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
}

TEST(Glob, QuestionMarkMatchesOneByte) {
  EXPECT_TRUE(glob_match("job?", "job1"));
  EXPECT_FALSE(glob_match("job?", "job"));
  EXPECT_FALSE(glob_match("job?", "job12"));
}

TEST(Glob, ClassesRangesAndNegation) {
  EXPECT_TRUE(glob_match("k[abc]", "kb"));
  EXPECT_FALSE(glob_match("k[abc]", "kd"));
  EXPECT_TRUE(glob_match("k[a-c]", "kc"));
  EXPECT_TRUE(glob_match("k[^a-c]", "kd"));
  EXPECT_FALSE(glob_match("k[^a-c]", "ka"));
}

TEST(Glob, BackslashEscapesAMetaCharacter) {
  EXPECT_TRUE(glob_match("a\\*b", "a*b"));
  EXPECT_FALSE(glob_match("a\\*b", "aXb"));
}

TEST(Glob, ManyStarsStayFast) {
  std::string text(5000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*b", text));
}

}  // namespace
}  // namespace holdfast
