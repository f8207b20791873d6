// The scale-out settings: [store] sessionGraceMs, poolSize, commitLanes, statementDeadlineMs
// and requireSyncReplication, and their flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server/config.h"

namespace holdfast {
namespace {

class StoreConfig : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("holdfast-store-config-" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& text) {
    auto p = dir / "holdfast.toml";
    std::ofstream(p) << text;
    return p.string();
  }
};

TEST_F(StoreConfig, DefaultsAreATenSecondGraceAndThirtyTwoConnections) {
  auto c = load_config("", {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->session_grace_ms, 10000);
  EXPECT_EQ(c->store_pool_size, 32);
  EXPECT_EQ(c->statement_deadline_ms, 3000);
  EXPECT_FALSE(c->require_sync_replication);
}

TEST_F(StoreConfig, TheDeadlineAndTheReplicationRequirementFromTheFileAndFlags) {
  auto path = write("[store]\nstatementDeadlineMs = 1500\nrequireSyncReplication = true\n");
  auto c = load_config(path, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->statement_deadline_ms, 1500);
  EXPECT_TRUE(c->require_sync_replication);
  ConfigOverrides o;
  o.statement_deadline_ms = 800;
  auto flagged = load_config(path, o);
  ASSERT_TRUE(flagged.ok());
  EXPECT_EQ(flagged->statement_deadline_ms, 800);
  ConfigOverrides require;
  require.require_sync_replication = true;
  EXPECT_TRUE(load_config("", require)->require_sync_replication);
}

TEST_F(StoreConfig, TheDeadlineIsADurationWithUnits) {
  auto c = load_config(write("[store]\nstatementDeadlineMs = \"2.5s\"\n"), {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->statement_deadline_ms, 2500);
  auto bad = load_config(write("[store]\nstatementDeadlineMs = \"3x\"\n"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("[store] statementDeadlineMs: \"3x\" is not a duration"),
            std::string::npos)
      << bad.error().message;
}

TEST_F(StoreConfig, TheFileSetsThemAndTheFlagOverridesTheGrace) {
  auto path = write(
      "[store]\nurl = \"postgres://db/x\"\nsessionGraceMs = 3000\npoolSize = 16\n"
      "commitLanes = 0\n");
  auto c = load_config(path, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->session_grace_ms, 3000);
  EXPECT_EQ(c->store_pool_size, 16);
  EXPECT_EQ(c->store_commit_lanes, 0);
  EXPECT_EQ(load_config(write("[store]\ncommitLanes = 9\n"), {})->store_commit_lanes, 9);
  ConfigOverrides o;
  o.session_grace_ms = 1500;
  EXPECT_EQ(load_config(path, o)->session_grace_ms, 1500);
}

TEST_F(StoreConfig, OutOfRangeValuesAreNamed) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"[store]\nsessionGraceMs = 10\n", "sessionGraceMs (--session-grace-ms) must be from 100"},
      {"[store]\nsessionGraceMs = \"long\"\n",
       "[store] sessionGraceMs: \"long\" is not a duration (use a whole number of milliseconds, "
       "or units ms, s, m, h: 1500ms, 30s, 5m, 2h)"},
      {"[store]\nsessionGraceMs = 1.5\n",
       "[store] sessionGraceMs must be a duration: an integer of milliseconds or a string such "
       "as \"30s\""},
      {"[store]\npoolSize = 0\n", "[store] poolSize must be from 1 to 256"},
      {"[store]\npool = 8\n", "unknown key 'pool' in [store]"},
      {"[store]\ncommitLanes = -1\n", "[store] commitLanes must be from 0 to 64"},
      {"[store]\ncommitLanes = 65\n", "[store] commitLanes must be from 0 to 64"},
      {"[store]\nstatementDeadlineMs = 50\n",
       "statementDeadlineMs (--statement-deadline-ms) must be from 100 to 60000"},
      {"[store]\nstatementDeadlineMs = 60001\n",
       "statementDeadlineMs (--statement-deadline-ms) must be from 100 to 60000"},
      {"[store]\nrequireSyncReplication = \"yes\"\n",
       "[store] requireSyncReplication must be true or false"},
  };
  for (const auto& c : cases) {
    auto r = load_config(write(c.text), {});
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

TEST_F(StoreConfig, TheGraceTakesUnits) {
  auto c = load_config(write("[store]\nsessionGraceMs = \"2.5s\"\n"), {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->session_grace_ms, 2500);
}

TEST_F(StoreConfig, OnlyPostgresqlUrlsOrLibpqStrings) {
  for (const char* url :
       {"postgres://db/x", "postgresql://u:p@db:5432/x", "POSTGRES://db/x", "host=db dbname=x"}) {
    ConfigOverrides o;
    o.store_url = url;
    auto c = load_config("", o);
    EXPECT_TRUE(c.ok()) << url << ": " << c.error().message;
  }
  ConfigOverrides mysql;
  mysql.store_url = "mysql://holdfast:s3cret@db/locks";
  auto r = load_config("", mysql);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "[store] url (--store): mysql:// is not supported: Holdfast keeps its locks in "
            "PostgreSQL (postgres:// or postgresql://, or a libpq key=value string)");
  EXPECT_EQ(r.error().message.find("s3cret"), std::string::npos) << "no password in messages";
  auto bare = load_config(write("[store]\nurl = \"db.example.com\"\n"), {});
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().message,
            "[store] url (--store) must be a postgres:// or postgresql:// URL or a libpq "
            "key=value string (host=... dbname=...)");
}

}  // namespace
}  // namespace holdfast
