// notify_service_manager (sd_notify.h) against real AF_UNIX datagram sockets the test binds,
// as systemd binds the one it names in $NOTIFY_SOCKET: a path, an abstract name, and the
// values that are wrong.
#include "server/sd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

namespace holdfast {
namespace {

// Sets NOTIFY_SOCKET for one test and puts back what was there.
class NotifySocketVariable {
 public:
  explicit NotifySocketVariable(const std::optional<std::string>& value) {
    if (const char* before = std::getenv("NOTIFY_SOCKET")) before_ = before;
    if (value) {
      ::setenv("NOTIFY_SOCKET", value->c_str(), 1);
    } else {
      ::unsetenv("NOTIFY_SOCKET");
    }
  }
  ~NotifySocketVariable() {
    if (before_) {
      ::setenv("NOTIFY_SOCKET", before_->c_str(), 1);
    } else {
      ::unsetenv("NOTIFY_SOCKET");
    }
  }

 private:
  std::optional<std::string> before_;
};

// A datagram socket bound to `name`: a path, or an abstract name when it starts with '@'.
class Receiver {
 public:
  explicit Receiver(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, name.data(), name.size());
    if (name[0] == '@') address.sun_path[0] = '\0';
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    bound_ = ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), length) == 0;
  }
  ~Receiver() { ::close(fd_); }
  bool bound() const { return bound_; }

  // The datagram already queued, if any: a sender on this machine has queued it by the time
  // its sendto() returned, so nothing here waits.
  std::optional<std::string> queued() const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return std::nullopt;
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0) return std::nullopt;
    return std::string(buffer, static_cast<std::size_t>(n));
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/holdfast-notify-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SdNotify, APathSocketGetsTheStateAsOneDatagram) {
  TempDir dir;
  const std::string path = dir.path() + "/notify";
  Receiver receiver(path);
  ASSERT_TRUE(receiver.bound());
  NotifySocketVariable variable(path);
  const Status st = notify_service_manager("READY=1\nSTATUS=holdfast ready mode=open");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(receiver.queued(), "READY=1\nSTATUS=holdfast ready mode=open");
  EXPECT_EQ(receiver.queued(), std::nullopt) << "one message, one datagram";
}

TEST(SdNotify, AnAbstractNameGetsTheState) {
  const std::string name = "@holdfast-notify-test-" + std::to_string(::getpid());
  Receiver receiver(name);
  ASSERT_TRUE(receiver.bound());
  NotifySocketVariable variable(name);
  const Status st = notify_service_manager("STOPPING=1");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(receiver.queued(), "STOPPING=1");
}

TEST(SdNotify, WithoutTheVariableNothingIsSent) {
  TempDir dir;
  const std::string path = dir.path() + "/notify";
  Receiver receiver(path);
  ASSERT_TRUE(receiver.bound());
  for (const std::optional<std::string>& value : {std::optional<std::string>(), {""}}) {
    NotifySocketVariable variable(value);
    EXPECT_TRUE(notify_service_manager("READY=1").ok());
  }
  EXPECT_EQ(receiver.queued(), std::nullopt);
}

TEST(SdNotify, AVariableThatIsNoSocketAddressIsAnErrorNamingIt) {
  NotifySocketVariable variable(std::string("run/notify"));
  const Status st = notify_service_manager("READY=1");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "NOTIFY_SOCKET=run/notify is neither a socket path (/...) nor an abstract name (@...)");
}

TEST(SdNotify, AnAddressLongerThanASocketAddressIsAnError) {
  NotifySocketVariable variable("/" + std::string(sizeof(sockaddr_un{}.sun_path), 'x'));
  const Status st = notify_service_manager("READY=1");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("is longer than a socket address"), std::string::npos)
      << st.error().message;
}

TEST(SdNotify, ASocketNobodyListensOnIsAnErrorWithTheReason) {
  TempDir dir;
  const std::string path = dir.path() + "/nobody";
  NotifySocketVariable variable(path);
  const Status st = notify_service_manager("READY=1");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "cannot notify " + path + ": No such file or directory");
}

}  // namespace
}  // namespace holdfast
