// MULTI / EXEC / DISCARD with Redis's semantics: queued commands run back to back and answer
// as one array; a command refused while queuing aborts the transaction; a blocking acquire
// inside one makes a single attempt; nothing runs before EXEC.
#include <gtest/gtest.h>

#include <chrono>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

class Transactions : public ::testing::Test {
 protected:
  ServerProcess server;
};

TEST_F(Transactions, QueuedCommandsRunAtExecAndAnswerAsOneArray) {
  auto c = server.client();
  auto other = server.client();
  EXPECT_EQ(c.call({"MULTI"}).str, "OK");
  EXPECT_EQ(c.call({"LOCK.TRY", "tx:a", "TTL", "60000"}).str, "QUEUED");
  EXPECT_EQ(c.call({"PING"}).str, "QUEUED");
  EXPECT_EQ(c.call({"LOCK.STATUS", "tx:a"}).str, "QUEUED");
  // Nothing ran yet.
  EXPECT_EQ(other.call({"LOCK.STATUS", "tx:a"}).number("held"), 0);
  auto exec = c.call({"EXEC"});
  ASSERT_EQ(exec.type, RespValue::Type::kArray) << exec.debug();
  ASSERT_EQ(exec.items.size(), 3u);
  EXPECT_EQ(exec.items[0].text("key"), "tx:a");
  EXPECT_EQ(exec.items[0].text("handle").size(), 26u);
  EXPECT_EQ(exec.items[1].str, "PONG");
  EXPECT_EQ(exec.items[2].number("held"), 1);
  EXPECT_EQ(exec.items[2].number("token"), exec.items[0].number("token"));
  // The connection is out of the transaction.
  EXPECT_EQ(c.call({"PING"}).str, "PONG");
}

TEST_F(Transactions, ACommandRefusedWhileQueuingAbortsTheTransactionAndTakesNothing) {
  auto c = server.client();
  c.call({"MULTI"});
  EXPECT_EQ(c.call({"LOCK.TRY", "tx:b", "TTL", "60000"}).str, "QUEUED");
  EXPECT_EQ(c.call({"LOCK.RELEASE", "tx:b"}).error_code(), "INVALID_ARGUMENT");  // arity
  EXPECT_EQ(c.call({"LOCK.TRY", "tx:b", "TTL", "soon"}).error_code(), "INVALID_ARGUMENT");
  EXPECT_EQ(c.call({"NO.SUCH"}).error_code(), "ERR");
  EXPECT_EQ(c.call({"EXEC"}).error_code(), "EXECABORT");
  EXPECT_EQ(c.call({"LOCK.STATUS", "tx:b"}).number("held"), 0);
}

TEST_F(Transactions, ABlockingAcquireInsideATransactionMakesOneAttempt) {
  auto holder = server.client();
  ASSERT_FALSE(holder.call({"LOCK.TRY", "tx:c", "TTL", "600000"}).is_null());
  auto c = server.client();
  c.call({"MULTI"});
  // Ten minutes: an acquire that waited inside EXEC would outlast the client's wait for the
  // reply, and its answer would not say timeoutMs=0.
  c.call({"LOCK.ACQUIRE", "tx:c", "TTL", "1000", "TIMEOUT", "600000"});
  auto exec = c.call({"EXEC"});
  ASSERT_EQ(exec.items.size(), 1u) << exec.debug();
  EXPECT_EQ(exec.items[0].str, "LOCK_TIMEOUT no grant within the timeout key=tx:c timeoutMs=0");
  EXPECT_EQ(holder.call({"LOCK.STATUS", "tx:c"}).number("waiters"), 0);
}

TEST_F(Transactions, DiscardDropsTheQueueAndStrayCommandsAreErrors) {
  auto c = server.client();
  EXPECT_EQ(c.call({"EXEC"}).str, "ERR EXEC without MULTI");
  EXPECT_EQ(c.call({"DISCARD"}).str, "ERR DISCARD without MULTI");
  c.call({"MULTI"});
  EXPECT_EQ(c.call({"MULTI"}).str, "ERR MULTI calls can not be nested");
  c.call({"LOCK.TRY", "tx:d", "TTL", "60000"});
  EXPECT_EQ(c.call({"DISCARD"}).str, "OK");
  EXPECT_EQ(c.call({"LOCK.STATUS", "tx:d"}).number("held"), 0);
  EXPECT_EQ(c.call({"WATCH", "tx:d"}).error_code(), "ERR");
  EXPECT_EQ(c.call({"UNWATCH"}).str, "OK");
}

TEST_F(Transactions, ResetEndsATransaction) {
  auto c = server.client();
  c.call({"MULTI"});
  c.call({"LOCK.TRY", "tx:e", "TTL", "60000"});
  EXPECT_EQ(c.call({"RESET"}).str, "RESET");
  EXPECT_EQ(c.call({"EXEC"}).str, "ERR EXEC without MULTI");
  EXPECT_EQ(c.call({"LOCK.STATUS", "tx:e"}).number("held"), 0);
}

TEST_F(Transactions, APipelinedTransactionBehindOtherCommandsKeepsEveryReplyInOrder) {
  auto c = server.client();
  std::string batch;
  for (const auto& cmd :
       std::vector<std::vector<std::string>>{{"LOCK.TRY", "tx:f1", "TTL", "60000"},
                                             {"MULTI"},
                                             {"LOCK.TRY", "tx:f2", "TTL", "60000"},
                                             {"LOCK.TRY", "tx:f1", "TTL", "60000"},
                                             {"EXEC"},
                                             {"PING", "after"}})
    batch += RespClient::encode(cmd);
  c.send_raw(batch);
  EXPECT_EQ(c.read().text("key"), "tx:f1");
  EXPECT_EQ(c.read().str, "OK");
  EXPECT_EQ(c.read().str, "QUEUED");
  EXPECT_EQ(c.read().str, "QUEUED");
  auto exec = c.read();
  ASSERT_EQ(exec.items.size(), 2u) << exec.debug();
  EXPECT_EQ(exec.items[0].text("key"), "tx:f2");
  EXPECT_TRUE(exec.items[1].is_null());  // tx:f1 is held (by this very connection, no owner)
  EXPECT_EQ(c.read().str, "after");
}

}  // namespace
}  // namespace holdfast::testing
