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

TEST(FormatKey, NamedPlaceholdersTakeTheirFields) {
  EXPECT_EQ(format_key("payment:{orderId}", {{"orderId", 42}}), "payment:42");
  EXPECT_EQ(format_key("{tenant}:order:{orderId}:{tenant}",
                       {{"orderId", OrderId{7}}, {"tenant", std::string("acme")}}),
            "acme:order:ord-7:acme");
  EXPECT_EQ(format_key("{{{id}}}", {{"id", "x"}}), "{x}");
  EXPECT_EQ(format_key("_a1:{_a1}", {{"_a1", true}}), "_a1:true");
}

TEST(FormatKey, NamedTemplatesRefuseWhatWouldBuildTheWrongKey) {
  auto message = [](auto build) {
    try {
      build();
    } catch (const InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] {
              format_key("payment:{orderId}", {{"order", 1}});
            }).find("has {orderId} but no field of that name"),
            std::string::npos);
  EXPECT_NE(message([] {
              format_key("payment:{orderId}", {{"orderId", 1}, {"extra", 2}});
            }).find("does not use the field extra"),
            std::string::npos);
  EXPECT_THROW(format_key("a:{x}", {{"x", 1}, {"x", 2}}), InvalidArgumentError);
  EXPECT_THROW(format_key("a:{}", {{"x", 1}}), InvalidArgumentError);
  EXPECT_THROW(format_key("a:{x}:{1x}", {{"x", 1}}), InvalidArgumentError);
  EXPECT_THROW(format_key("a:{x", {{"x", 1}}), InvalidArgumentError);
  // Positional arguments do not fill named placeholders.
  EXPECT_NE(message([] { format_key("payment:{orderId}", 42); }).find("named placeholder"),
            std::string::npos);
}

}  // namespace
}  // namespace holdfast
