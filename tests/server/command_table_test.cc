// The command table is the source of truth for usage lines; docs/resp.md must show each one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "server/resp/commands.h"

namespace holdfast::resp {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CommandTable, EveryCommandIsDocumentedWithItsUsageLine) {
  std::string doc = read_file(std::string(HOLDFAST_SOURCE_DIR) + "/docs/resp.md");
  ASSERT_FALSE(doc.empty());
  std::string unescaped;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (doc[i] == '\\' && i + 1 < doc.size() && doc[i + 1] == '|') continue;
    unescaped.push_back(doc[i]);
  }
  for (const auto& c : command_table())
    EXPECT_NE(unescaped.find("`" + std::string(c.usage) + "`"), std::string::npos) << c.usage;
}

TEST(CommandTable, LookupIsCaseInsensitiveAndExact) {
  EXPECT_NE(find_command("lock.try"), nullptr);
  EXPECT_NE(find_command("Lock.Acquire"), nullptr);
  EXPECT_EQ(find_command("lock.tr"), nullptr);
  EXPECT_EQ(find_command(std::string(100, 'x')), nullptr);
}

TEST(CommandTable, ArityMatchesTheUsageLine) {
  for (const auto& c : command_table()) {
    EXPECT_GE(c.min_args, 0) << c.name;
    if (c.max_args >= 0) {
      EXPECT_GE(c.max_args, c.min_args) << c.name;
    }
    EXPECT_EQ(c.usage.substr(0, c.name.size()), c.name);
  }
}

TEST(CommandTable, EachRowIsAConnectionCommandOrALockCallWithItsRenderer) {
  for (const auto& c : command_table()) {
    if (c.local != nullptr) {
      EXPECT_EQ(c.call, nullptr) << c.name;
      EXPECT_TRUE(c.options.empty()) << c.name;
      continue;
    }
    EXPECT_NE(c.call, nullptr) << c.name;
    EXPECT_NE(c.write, nullptr) << c.name;
    EXPECT_LE(c.options.size(), kMaxOptions) << c.name;
  }
}

TEST(CommandTable, EveryDeclaredOptionIsInTheUsageLine) {
  for (const auto& c : command_table()) {
    for (const auto& o : c.options)
      EXPECT_NE(c.usage.find(std::string(o.name)), std::string_view::npos)
          << c.name << " " << o.name;
  }
}

}  // namespace
}  // namespace holdfast::resp
