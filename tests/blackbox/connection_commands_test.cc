// The connection-level commands Redis clients and tools send, in Redis's shapes: INFO, CLIENT,
// SELECT, ECHO, TIME, DBSIZE, RESET, CONFIG GET, COMMAND, and AUTH/HELLO with Redis's error
// codes and its "default" user.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>

#include "support/auth_config.h"
#include "support/eventually.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

// "a:1\r\nb:x\r\n# Section\r\n" -> {a: 1, b: x}
std::map<std::string, std::string> info_fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

// One CLIENT LIST line -> {id: 7, name: x, ...}
std::map<std::string, std::string> client_fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

class ConnectionCommands : public ::testing::Test {
 protected:
  ServerProcess server;
};

TEST_F(ConnectionCommands, InfoHasTheFieldsClientsReadWithCrlfLines) {
  auto c = server.client();
  c.call({"LOCK.TRY", "a", "TTL", "60000"});
  c.call({"LOCK.TRY", "b", "TTL", "60000"});
  auto info = c.call({"INFO"});
  ASSERT_EQ(info.type, RespValue::Type::kBulk) << info.debug();
  EXPECT_NE(info.str.find("# Server\r\nredis_version:7."), std::string::npos) << info.str;
  for (const char* section :
       {"# Clients", "# Memory", "# Persistence", "# Stats", "# Keyspace", "# Holdfast"})
    EXPECT_NE(info.str.find(section), std::string::npos) << section;
  auto f = info_fields(info.str);
  EXPECT_EQ(f["loading"], "0");
  EXPECT_EQ(f["tcp_port"], std::to_string(server.port()));
  EXPECT_EQ(f["db0"], "keys=2,waiters=0");
  EXPECT_EQ(f["holds"], "2");
  EXPECT_EQ(f["connected_clients"], "1");
  EXPECT_EQ(f["node_mode"], server.store_url().empty() ? "embedded" : "scale-out");
  EXPECT_EQ(f["store"], server.store_url().empty() ? "wal" : "postgres");
  EXPECT_GT(std::stoll(f["used_memory"]), 0);
  EXPECT_GE(std::stoll(f["total_commands_processed"]), 2);  // the two LOCK.TRYs
}

TEST_F(ConnectionCommands, InfoAnswersTheSectionsAskedFor) {
  auto c = server.client();
  auto only = c.call({"INFO", "holdfast", "Clients"});
  auto f = info_fields(only.str);
  EXPECT_TRUE(f.count("holds"));
  EXPECT_TRUE(f.count("connected_clients"));
  EXPECT_FALSE(f.count("redis_version")) << only.str;
  EXPECT_EQ(c.call({"INFO", "nosuchsection"}).str, "");
  // RESP3: a verbatim string, which the test client reads as text.
  c.call({"HELLO", "3"});
  EXPECT_NE(c.call({"INFO", "persistence"}).str.find("loading:0\r\n"), std::string::npos);
}

TEST_F(ConnectionCommands, DbsizeCountsHeldKeys) {
  auto c = server.client();
  EXPECT_EQ(c.call({"DBSIZE"}).integer, 0);
  c.call({"LOCK.TRY", "a", "TTL", "60000"});
  c.call({"LOCK.ASSIGN", "b", "worker-1"});
  EXPECT_EQ(c.call({"DBSIZE"}).integer, 2);
}

TEST_F(ConnectionCommands, SelectZeroIsTheOnlyDatabase) {
  auto c = server.client();
  EXPECT_EQ(c.call({"SELECT", "0"}).str, "OK");
  auto other = c.call({"SELECT", "1"});
  // Redis's own words for an index past its databases, so clients report it as they know it.
  EXPECT_EQ(other.str, "ERR DB index is out of range");
  EXPECT_EQ(c.call({"SELECT", "x"}).error_code(), "ERR");
}

TEST_F(ConnectionCommands, EchoAndTime) {
  auto c = server.client();
  EXPECT_EQ(c.call({"ECHO", "hello world"}).str, "hello world");
  auto before = std::chrono::system_clock::now();
  auto time = c.call({"TIME"});
  ASSERT_EQ(time.items.size(), 2u) << time.debug();
  const auto seconds = std::stoll(time.items[0].str);
  EXPECT_NEAR(
      static_cast<double>(seconds),
      static_cast<double>(
          std::chrono::duration_cast<std::chrono::seconds>(before.time_since_epoch()).count()),
      5);
  EXPECT_LT(std::stoll(time.items[1].str), 1'000'000);
}

TEST_F(ConnectionCommands, ClientNamesShowInClientList) {
  auto a = server.client();
  auto b = server.client();
  EXPECT_TRUE(a.call({"CLIENT", "GETNAME"}).is_null());
  EXPECT_EQ(a.call({"CLIENT", "SETNAME", "worker-1"}).str, "OK");
  EXPECT_EQ(a.call({"CLIENT", "GETNAME"}).str, "worker-1");
  EXPECT_EQ(a.call({"CLIENT", "SETINFO", "LIB-NAME", "tester"}).str, "OK");
  EXPECT_EQ(a.call({"CLIENT", "SETINFO", "lib-ver", "1.2"}).str, "OK");
  EXPECT_EQ(a.call({"CLIENT", "SETNAME", "two words"}).error_code(), "ERR");
  EXPECT_EQ(a.call({"CLIENT", "SETINFO", "LIB-COLOR", "x"}).error_code(), "ERR");
  const std::int64_t a_id = a.call({"CLIENT", "ID"}).integer;
  const auto list = lines(b.call({"CLIENT", "LIST"}).str);
  ASSERT_EQ(list.size(), 2u);
  auto first = client_fields(list[0]);
  EXPECT_EQ(first["id"], std::to_string(a_id));
  EXPECT_EQ(first["name"], "worker-1");
  EXPECT_EQ(first["lib-name"], "tester");
  EXPECT_EQ(first["lib-ver"], "1.2");
  EXPECT_EQ(first["laddr"], "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(first["cmd"], "client");
  EXPECT_EQ(first["user"], "local");
  EXPECT_EQ(first["db"], "0");
  auto mine = client_fields(b.call({"CLIENT", "INFO"}).str);
  EXPECT_EQ(mine["name"], "");
  EXPECT_EQ(lines(b.call({"CLIENT", "LIST", "ID", std::to_string(a_id)}).str).size(), 1u);
  EXPECT_EQ(b.call({"CLIENT", "LIST", "TYPE", "pubsub"}).str, "");
}

TEST_F(ConnectionCommands, HelloSetnameNamesTheConnection) {
  auto c = server.client();
  auto hello = c.call({"HELLO", "3", "SETNAME", "job-7"});
  ASSERT_EQ(hello.type, RespValue::Type::kMap) << hello.debug();
  EXPECT_EQ(hello.text("server"), "holdfast");
  EXPECT_EQ(hello.text("role"), "master");
  EXPECT_EQ(c.call({"CLIENT", "GETNAME"}).str, "job-7");
  EXPECT_EQ(client_fields(c.call({"CLIENT", "INFO"}).str)["resp"], "3");
}

TEST_F(ConnectionCommands, NoEvictAndNoTouchAreFlagsOnly) {
  auto c = server.client();
  EXPECT_EQ(c.call({"CLIENT", "NO-EVICT", "on"}).str, "OK");
  EXPECT_EQ(c.call({"CLIENT", "NO-TOUCH", "ON"}).str, "OK");
  EXPECT_EQ(client_fields(c.call({"CLIENT", "INFO"}).str)["flags"], "eT");
  EXPECT_EQ(c.call({"CLIENT", "NO-EVICT", "maybe"}).error_code(), "ERR");
  EXPECT_EQ(c.call({"CLIENT", "FROB"}).str, "ERR unknown subcommand 'FROB'. Try CLIENT HELP.");
  EXPECT_EQ(c.call({"CLIENT"}).error_code(), "INVALID_ARGUMENT");
  auto help = c.call({"CLIENT", "HELP"});
  ASSERT_GE(help.items.size(), 2u) << help.debug();
  EXPECT_EQ(help.items[0].str, "ID");
  EXPECT_EQ(c.call({"COMMAND", "HELP"}).items[0].str, "COUNT");
}

TEST_F(ConnectionCommands, ClientKillClosesTheConnectionAndEndsItsSessionHolds) {
  auto victim = server.client();
  victim.call({"CLIENT", "SETNAME", "doomed"});
  ASSERT_FALSE(victim.call({"LOCK.TRY", "session-key", "TTL", "60000", "SESSION"}).is_null());
  const std::string id = std::to_string(victim.call({"CLIENT", "ID"}).integer);
  auto admin = server.client();
  EXPECT_EQ(admin.call({"CLIENT", "KILL", "ID", id}).integer, 1);
  EXPECT_TRUE(victim.wait_closed());
  // The connection's end frees its session holds; a node over PostgreSQL does it in a database
  // statement of its own, which may commit just after the socket closed.
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (admin.call({"LOCK.STATUS", "session-key"}).number("held") != 0 &&
         std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_EQ(admin.call({"LOCK.STATUS", "session-key"}).number("held"), 0);
  EXPECT_EQ(admin.call({"CLIENT", "KILL", "ID", id}).integer, 0);
  EXPECT_EQ(admin.call({"CLIENT", "KILL", "127.0.0.1:1"}).str, "ERR No such client");
  // SKIPME no includes the caller, which gets its reply and then the connection closes.
  EXPECT_EQ(admin.call({"CLIENT", "KILL", "USER", "local", "SKIPME", "no"}).integer, 1);
  EXPECT_TRUE(admin.wait_closed());
}

TEST_F(ConnectionCommands, ResetForgetsTheNameAndTheProtocol) {
  auto c = server.client();
  c.call({"HELLO", "3", "SETNAME", "x"});
  EXPECT_EQ(c.call({"RESET"}).str, "RESET");
  EXPECT_TRUE(c.call({"CLIENT", "GETNAME"}).is_null());
  EXPECT_EQ(c.call({"LOCK.STATUS", "k"}).type, RespValue::Type::kArray) << "RESP2 again";
}

TEST_F(ConnectionCommands, ConfigGetAnswersReadOnlySettings) {
  auto c = server.client();
  auto save = c.call({"CONFIG", "GET", "save"});
  ASSERT_EQ(save.items.size(), 2u) << save.debug();
  EXPECT_EQ(save.items[0].str, "save");
  EXPECT_EQ(c.call({"CONFIG", "GET", "appendonly"}).text("appendonly"),
            server.store_url().empty() ? "yes" : "no");
  EXPECT_EQ(c.call({"CONFIG", "GET", "port"}).text("port"), std::to_string(server.port()));
  auto many = c.call({"CONFIG", "GET", "append*", "databases"});
  EXPECT_EQ(many.items.size(), 6u) << many.debug();
  EXPECT_EQ(c.call({"CONFIG", "GET", "nosuch"}).items.size(), 0u);
  EXPECT_EQ(c.call({"CONFIG", "SET", "save", ""}).error_code(), "ERR");
}

TEST_F(ConnectionCommands, CommandInfoHasRedis7Shapes) {
  auto c = server.client();
  auto info = c.call({"COMMAND", "INFO", "lock.try", "nosuch", "client|setname"});
  ASSERT_EQ(info.items.size(), 3u) << info.debug();
  const auto& lock_try = info.items[0];
  ASSERT_EQ(lock_try.items.size(), 10u) << lock_try.debug();
  EXPECT_EQ(lock_try.items[0].str, "lock.try");
  EXPECT_EQ(lock_try.items[1].integer, -4);
  EXPECT_EQ(lock_try.items[1 + 2].integer, 1) << "first key";
  EXPECT_EQ(lock_try.items[8].items.size(), 1u) << "one key spec";
  EXPECT_TRUE(info.items[1].is_null());
  EXPECT_EQ(info.items[2].items[0].str, "client|setname");
  EXPECT_EQ(info.items[2].items[1].integer, 3);
  EXPECT_EQ(c.call({"COMMAND", "COUNT"}).integer,
            static_cast<std::int64_t>(c.call({"COMMAND"}).items.size()));
  std::size_t lock_commands = 0;
  for (const auto& command : c.call({"COMMAND"}).items)
    lock_commands += command.items[0].str.rfind("lock.", 0) == 0;
  auto list = c.call({"COMMAND", "LIST", "FILTERBY", "PATTERN", "lock.*"});
  EXPECT_EQ(list.items.size(), lock_commands) << list.debug();
  EXPECT_GE(lock_commands, 10u);
}

TEST_F(ConnectionCommands, CommandDocsDescribeArgumentsFromTheUsageLines) {
  auto c = server.client();
  c.call({"HELLO", "3"});
  auto docs = c.call({"COMMAND", "DOCS", "lock.acquire"});
  ASSERT_EQ(docs.type, RespValue::Type::kMap) << docs.debug();
  const RespValue* acquire = docs.get("lock.acquire");
  ASSERT_NE(acquire, nullptr);
  EXPECT_EQ(acquire->text("group"), "lock");
  const RespValue* args = acquire->get("arguments");
  ASSERT_NE(args, nullptr);
  ASSERT_EQ(args->items.size(), 9u) << args->debug();  // with MODE, PERMITS, TAKE, LOCKDELAY
  EXPECT_EQ(args->items[0].text("type"), "key");
  EXPECT_EQ(args->items[1].text("token"), "TTL");
  EXPECT_EQ(args->items[1].text("type"), "integer");
  EXPECT_EQ(args->items[4].text("type"), "pure-token");
  EXPECT_EQ(args->items[4].get("flags")->items[0].str, "optional");
  auto all = c.call({"COMMAND", "DOCS"});
  EXPECT_EQ(all.items.size() / 2, static_cast<std::size_t>(c.call({"COMMAND", "COUNT"}).integer));
  EXPECT_NE(all.get("client")->get("subcommands")->get("client|kill"), nullptr);
}

class ConnectionAuth : public ::testing::Test {
 protected:
  AuthConfig config;
  ServerProcess server{config.flags()};
};

TEST_F(ConnectionAuth, RedisErrorCodesForMissingAndWrongCredentials) {
  auto c = server.client();
  auto before = c.call({"LOCK.STATUS", "k"});
  EXPECT_EQ(before.error_code(), "NOAUTH") << before.debug();
  EXPECT_EQ(c.call({"CLIENT", "SETNAME", "x"}).error_code(), "NOAUTH");
  EXPECT_EQ(c.call({"AUTH", "wrong"}).error_code(), "WRONGPASS");
  EXPECT_EQ(c.call({"AUTH", "bob", "alice-secret"}).error_code(), "WRONGPASS");
  EXPECT_EQ(c.call({"HELLO", "3"}).error_code(), "NOAUTH");
  EXPECT_EQ(c.call({"HELLO", "3", "AUTH", "alice", "nope"}).error_code(), "WRONGPASS");
  EXPECT_EQ(c.call({"HELLO", "4"}).error_code(), "NOPROTO");
}

TEST_F(ConnectionAuth, UserDefaultMeansNoUserName) {
  auto a = server.client();
  EXPECT_EQ(a.call({"AUTH", "default", "alice-secret"}).str, "OK");
  EXPECT_EQ(a.call({"LOCK.TRY", "user:alice:1", "TTL", "1000"}).text("heldBy"), "user:alice");
  auto b = server.client();
  auto hello = b.call({"HELLO", "3", "AUTH", "default", "bob-secret", "SETNAME", "bobs"});
  ASSERT_EQ(hello.type, RespValue::Type::kMap) << hello.debug();
  EXPECT_EQ(b.call({"LOCK.TRY", "k:bob", "TTL", "1000"}).text("heldBy"), "user:bob");
  auto me = client_fields(b.call({"CLIENT", "INFO"}).str);
  EXPECT_EQ(me["user"], "bob");
  EXPECT_EQ(me["name"], "bobs");
}

TEST_F(ConnectionAuth, ResetLogsOutAndClientKillNeedsAnAdmin) {
  auto alice = server.client();
  alice.call({"AUTH", "alice-secret"});
  EXPECT_EQ(alice.call({"CLIENT", "KILL", "USER", "bob"}).error_code(), "FORBIDDEN");
  auto bob = server.client();
  bob.call({"AUTH", "bob-secret"});
  auto alice_again = server.client();
  alice_again.call({"AUTH", "alice", "alice-secret"});
  EXPECT_EQ(lines(alice.call({"CLIENT", "LIST"}).str).size(), 2u)
      << "alice's two connections, not bob's";
  EXPECT_EQ(alice.call({"RESET"}).str, "RESET");
  EXPECT_EQ(alice.call({"LOCK.STATUS", "k"}).error_code(), "NOAUTH");
  auto root = server.client();
  root.call({"AUTH", "root-secret"});
  alice.call({"AUTH", "alice-secret"});
  EXPECT_EQ(root.call({"CLIENT", "KILL", "USER", "alice"}).integer, 2);
  EXPECT_TRUE(alice.wait_closed());
  EXPECT_TRUE(alice_again.wait_closed());
  EXPECT_EQ(bob.call({"PING"}).str, "PONG");
}

}  // namespace
}  // namespace holdfast::testing
