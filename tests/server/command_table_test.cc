// The command table is the source of truth for usage lines; docs/resp.md must show each one.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "server/resp/commands.h"
#include "server/resp/usage_grammar.h"

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
  EXPECT_EQ(find_command(""), nullptr);
  EXPECT_EQ(find_command(std::string_view("lock.try\0", 9)), nullptr);
}

TEST(CommandTable, EveryCommandIsFoundByItsNameInEitherCase) {
  for (const auto& c : command_table()) {
    std::string lower(c.name);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_EQ(find_command(c.name), &c) << c.name;
    EXPECT_EQ(find_command(lower), &c) << lower;
  }
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
    if (c.local != nullptr || !c.subcommands.empty()) {
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

TEST(CommandTable, EveryUsageLineFollowsTheGrammar) {
  for (const auto& c : command_table()) {
    EXPECT_TRUE(parse_usage(c.usage, 1).has_value()) << c.usage;
    EXPECT_FALSE(c.group.empty()) << c.name;
    for (const auto& sub : c.subcommands) {
      EXPECT_EQ(sub.usage.substr(0, c.name.size() + 1 + sub.name.size()),
                std::string(c.name) + " " + std::string(sub.name));
      EXPECT_TRUE(parse_usage(sub.usage, 2).has_value()) << sub.usage;
      EXPECT_NE(sub.local, nullptr) << sub.usage;
    }
  }
}

TEST(CommandTable, SubcommandsAreFoundCaseInsensitively) {
  const CommandSpec* client = find_command("client");
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(find_subcommand(*client, "setname")->name, "SETNAME");
  EXPECT_EQ(find_subcommand(*client, "no-evict")->name, "NO-EVICT");
  EXPECT_EQ(find_subcommand(*client, "frob"), nullptr);
}

TEST(UsageGrammar, TokensOptionalGroupsAndChoices) {
  auto args = parse_usage("LOCK.ACQUIRE <key> TTL <ms> TIMEOUT <ms> [OWNER <owner>] [SESSION]", 1);
  ASSERT_TRUE(args);
  ASSERT_EQ(args->size(), 5u);
  EXPECT_EQ((*args)[0].type, "key");
  EXPECT_EQ((*args)[1].token, "TTL");
  EXPECT_EQ((*args)[1].type, "integer");
  EXPECT_FALSE((*args)[1].optional);
  EXPECT_EQ((*args)[3].token, "OWNER");
  EXPECT_EQ((*args)[3].type, "string");
  EXPECT_TRUE((*args)[3].optional);
  EXPECT_EQ((*args)[4].type, "pure-token");
  EXPECT_TRUE((*args)[4].optional);

  auto hello = parse_usage("HELLO [2|3] [AUTH <user> <token>] [SETNAME <name>]", 1);
  ASSERT_TRUE(hello);
  ASSERT_EQ(hello->size(), 3u);
  EXPECT_EQ((*hello)[0].type, "oneof");
  EXPECT_EQ((*hello)[0].arguments.size(), 2u);
  EXPECT_EQ((*hello)[1].type, "block");
  EXPECT_EQ((*hello)[1].token, "AUTH");
  EXPECT_EQ((*hello)[1].arguments.size(), 2u);

  auto list = parse_usage("CLIENT LIST [TYPE <type>] [ID <id>...]", 2);
  ASSERT_TRUE(list);
  EXPECT_TRUE((*list)[1].multiple);
  EXPECT_EQ((*list)[1].type, "integer");
}

TEST(UsageGrammar, MalformedLinesAreRefused) {
  EXPECT_FALSE(parse_usage("X [<a>", 1));
  EXPECT_FALSE(parse_usage("X <a>]", 1));
  EXPECT_FALSE(parse_usage("X <>", 1));
  EXPECT_FALSE(parse_usage("X lower", 1));
  EXPECT_TRUE(parse_usage("X", 1));
}

}  // namespace
}  // namespace holdfast::resp
