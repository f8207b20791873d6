// format_key: `{}` substitution for per-resource keys.
#include <gtest/gtest.h>

#include "holdfast/errors.h"
#include "holdfast/key_format.h"

namespace holdfast {
namespace {

struct OrderId {
  int n;
};
std::ostream& operator<<(std::ostream& out, const OrderId& id) { return out << "ord-" << id.n; }

TEST(FormatKey, SubstitutesInOrder) {
  EXPECT_EQ(format_key("task:{}", 42), "task:42");
  EXPECT_EQ(format_key("{}:{}:{}", std::string("a"), "b", std::string_view("c")), "a:b:c");
  EXPECT_EQ(format_key("p:{}", OrderId{7}), "p:ord-7");
  EXPECT_EQ(format_key("flag:{}:{}", true, 'x'), "flag:true:x");
  EXPECT_EQ(format_key("plain"), "plain");
}

TEST(FormatKey, DoubledBracesAreLiteral) { EXPECT_EQ(format_key("{{{}}}", 1), "{1}"); }

TEST(FormatKey, CountMismatchAndLoneBracesThrow) {
  EXPECT_THROW(format_key("task:{}"), InvalidArgumentError);
  EXPECT_THROW(format_key("task", 1), InvalidArgumentError);
  EXPECT_THROW(format_key("task:{", 1), InvalidArgumentError);
  EXPECT_THROW(format_key("task:}{}", 1), InvalidArgumentError);
}

}  // namespace
}  // namespace holdfast
