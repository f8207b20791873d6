// The name-to-lock mappings are a contract with operators (docs, SQL formulas) and with other
// processes of other versions: pin them to known values. The expected values come from an
// independent SHA-256 (Python's hashlib); the SQL forms are checked against real servers in
// the postgres and mariadb tests.
#include <gtest/gtest.h>

#include <string>

#include "holdfast/sql/advisory_lock.h"

namespace holdfast::sql {
namespace {

TEST(AdvisoryKey, IsTheFirstEightBytesOfSha256AsSignedBigEndian) {
  EXPECT_EQ(advisory_key("job"), 6812988570718632683);
  EXPECT_EQ(advisory_key("nightly-report"), 7440995589958059143);
  EXPECT_EQ(advisory_key("\xC3\xA9"), 5375421630974772051);  // "é" in UTF-8
}

TEST(AdvisoryKey, HighBitGivesANegativeKeyLikePostgresBitCast) {
  EXPECT_EQ(advisory_key(""), -2039914840885289964);  // SHA-256("") starts e3b0c442...
}

TEST(AdvisoryKey, DistinguishesCase) { EXPECT_NE(advisory_key("Job"), advisory_key("job")); }

TEST(MysqlLockName, KeepsNamesOfUpTo64Characters) {
  EXPECT_EQ(mysql_lock_name("nightly-report"), "nightly-report");
  const std::string sixty_four(64, 'a');
  EXPECT_EQ(mysql_lock_name(sixty_four), sixty_four);
}

TEST(MysqlLockName, HashesLongerNamesToExactly64CharactersWithAReadablePrefix) {
  EXPECT_EQ(mysql_lock_name(std::string(65, 'a')),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa~635361c48bb9eab14198e76ea8ab7f1a");
  EXPECT_EQ(mysql_lock_name(std::string(40, 'x') + std::string(40, 'y')),
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx~5f23e845240fffa43636ebf342efbe52");
}

TEST(MysqlLockName, CountsCharactersNotBytes) {
  std::string e64, e65, e31;
  for (int i = 0; i < 64; ++i) e64 += "\xC3\xA9";
  e65 = e64 + "\xC3\xA9";
  for (int i = 0; i < 31; ++i) e31 += "\xC3\xA9";
  EXPECT_EQ(mysql_lock_name(e64), e64);  // 128 bytes, 64 characters: fits
  EXPECT_EQ(mysql_lock_name(e65), e31 + "~c8a2666a1a2bceeac205744f944a3f5b");
}

TEST(MysqlLockName, DifferentLongNamesGetDifferentLockNames) {
  const std::string base(70, 'n');
  EXPECT_NE(mysql_lock_name(base + "1"), mysql_lock_name(base + "2"));
}

}  // namespace
}  // namespace holdfast::sql
