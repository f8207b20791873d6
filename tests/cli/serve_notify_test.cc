// `holdfast serve` under a service manager: with $NOTIFY_SOCKET set, as systemd sets it for a
// unit of Type=notify, the real server sends READY=1 once it answers and STOPPING=1 when a
// SIGTERM stops it, each from its main process (the unit says NotifyAccess=main). The socket
// is a real AF_UNIX datagram socket the test binds, as systemd does.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>

#include "support/server_process.h"

namespace holdfast::testing {
namespace {

struct Notification {
  std::string state;
  pid_t sender = 0;  // from the kernel's SCM_CREDENTIALS, not from the message
};

class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    const int on = 1;
    ready_ = fd_ >= 0 &&
             ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
             ::setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0;
  }
  ~NotifySocket() { ::close(fd_); }
  bool ready() const { return ready_; }
  const std::string& path() const { return path_; }

  // The next datagram and who sent it; nullopt if none comes within `timeout_ms` (a bound
  // against hanging: the server sends it as it prints its ready line or stops).
  std::optional<Notification> next(int timeout_ms = 20000) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    char buffer[4096];
    iovec io{buffer, sizeof buffer};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &message, 0);
    if (n < 0) return std::nullopt;
    Notification got{std::string(buffer, static_cast<std::size_t>(n))};
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred credentials{};
        std::memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
        got.sender = credentials.pid;
      }
    }
    return got;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool ready_ = false;
};

TEST(ServeNotify, ReadyOnceItAnswersAndStoppingOnSigtermFromTheMainProcess) {
  TempDir dir;
  NotifySocket notify(dir.path() + "/notify");
  ASSERT_TRUE(notify.ready()) << std::strerror(errno);
  ServerProcess server({}, "", {"NOTIFY_SOCKET=" + notify.path()});

  const std::optional<Notification> ready = notify.next();
  ASSERT_TRUE(ready.has_value()) << "no READY=1 from the server";
  EXPECT_EQ(ready->state,
            "READY=1\nSTATUS=holdfast ready resp=127.0.0.1:" + std::to_string(server.port()) +
                " unix=" + server.unix_path() +
                " http=127.0.0.1:" + std::to_string(server.http_port()) + " mode=open");
  EXPECT_EQ(ready->sender, server.pid());
  // Ready means serving: the listeners are bound and the log recovered.
  EXPECT_EQ(server.client().call({"PING"}).str, "PONG");

  const pid_t pid = server.pid();
  EXPECT_EQ(server.stop(), 0);
  const std::optional<Notification> stopping = notify.next();
  ASSERT_TRUE(stopping.has_value()) << "no STOPPING=1 from the server";
  EXPECT_EQ(stopping->state, "STOPPING=1");
  EXPECT_EQ(stopping->sender, pid);
  EXPECT_EQ(notify.next(0), std::nullopt) << "nothing more after STOPPING=1";
}

TEST(ServeNotify, AWrongNotifySocketIsLoggedAndTheServerServesAnyway) {
  TempDir dir;
  const std::string nobody = dir.path() + "/nobody-listens";
  ServerProcess server({}, "", {"NOTIFY_SOCKET=" + nobody});
  EXPECT_EQ(server.client().call({"PING"}).str, "PONG");
  const std::string log = server.drain_output();
  EXPECT_NE(log.find("warn cannot notify " + nobody + ": No such file or directory"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace holdfast::testing
