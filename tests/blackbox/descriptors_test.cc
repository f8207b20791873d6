// A server that runs out of file descriptors: new clients wait in the listen queue, the server
// neither spins nor floods its log, and it serves them once descriptors free up.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/eventually.h"
#include "support/loopback.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

// Starts a server whose soft descriptor limit is `limit` when it starts (the child inherits it
// from this process, whose own limit is restored once the server has started, or failed to).
std::unique_ptr<ServerProcess> server_started_with_soft_limit(rlim_t limit) {
  struct Restore {
    rlimit saved{};
    Restore() { ::getrlimit(RLIMIT_NOFILE, &saved); }
    ~Restore() { ::setrlimit(RLIMIT_NOFILE, &saved); }
  } restore;
  rlimit low = restore.saved;
  low.rlim_cur = limit;
  ::setrlimit(RLIMIT_NOFILE, &low);
  return std::make_unique<ServerProcess>();
}

// The server's soft and hard limits on open files, from /proc.
std::pair<std::string, std::string> open_files_limits(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(std::string("Max open files").size()));
    std::string soft, hard;
    fields >> soft >> hard;
    return {soft, hard};
  }
  return {};
}

// PING on a raw connection; true when +PONG comes back (false if it never does).
bool pings(int fd) {
  timeval timeout{kEventuallyMs / 1000, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (!send_all(fd, "PING\r\n")) return false;
  std::string reply;
  char buf[64];
  while (reply.size() < 7) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  return reply == "+PONG\r\n";
}

TEST(Descriptors, AServerOutOfDescriptorsWaitsQuietlyAndServesTheQueueOnceSomeClose) {
  ServerProcess server;
  const rlimit low{64, 64};  // soft and hard: the server cannot raise it again
  ASSERT_EQ(::prlimit(server.pid(), RLIMIT_NOFILE, &low, nullptr), 0) << std::strerror(errno);
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> clients;
  for (int i = 0; i < 100; ++i) {
    const int fd = tcp_connect(server.port());  // queued by the kernel whether accepted or not
    ASSERT_GE(fd, 0);
    clients.push_back(fd);
  }
  std::string log;
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (log.find("accept: Too many open files") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    log += server.drain_output(100);
  ASSERT_NE(log.find("accept: Too many open files"), std::string::npos) << log;
  // The last ten are still in the listen queue. Free the descriptors of the others.
  for (std::size_t i = 0; i + 10 < clients.size(); ++i) ::close(clients[i]);
  for (std::size_t i = clients.size() - 10; i < clients.size(); ++i) {
    ASSERT_TRUE(pings(clients[i])) << "client " << i << " was not served";
    ::close(clients[i]);
  }
  log += server.drain_output(100);
  // One warning a second at most (retrying at once used to log a million lines a second).
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
  EXPECT_LE(occurrences(log, "accept: "), static_cast<std::size_t>(seconds.count()) + 2)
      << log.substr(0, 2000);
  EXPECT_EQ(server.client().call({"PING"}).str, "PONG");
}

TEST(Descriptors, TheServerRaisesItsOpenFilesLimitToTheHardLimit) {
  rlimit own{};
  ::getrlimit(RLIMIT_NOFILE, &own);
  ASSERT_GT(own.rlim_max, 256u) << "the hard limit leaves nothing to raise";
  auto server = server_started_with_soft_limit(256);
  const auto [soft, hard] = open_files_limits(server->pid());
  EXPECT_EQ(soft, hard);
  EXPECT_NE(soft, "256");
  EXPECT_EQ(server->client().call({"PING"}).str, "PONG");
}

}  // namespace
}  // namespace holdfast::testing
