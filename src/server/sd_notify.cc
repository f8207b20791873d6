#include "server/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace holdfast {

Status notify_service_manager(std::string_view state) {
  const char* variable = std::getenv("NOTIFY_SOCKET");
  if (variable == nullptr || *variable == '\0') return ok_status();
  const std::string name(variable);
  if (name[0] != '/' && name[0] != '@')
    return invalid_argument("NOTIFY_SOCKET=" + name +
                            " is neither a socket path (/...) nor an abstract name (@...)");
  sockaddr_un address{};
  if (name.size() > sizeof(address.sun_path))
    return invalid_argument("NOTIFY_SOCKET=" + name + " is longer than a socket address");
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, name.data(), name.size());
  // An abstract name is the bytes after a leading NUL, exactly as long as given: no terminator.
  if (name[0] == '@') address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());

  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error(ErrorCode::kUnavailable, std::string("socket: ") + std::strerror(errno));
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
                                reinterpret_cast<const sockaddr*>(&address), length);
  const int send_errno = errno;
  ::close(fd);
  if (sent < 0)
    return Error(ErrorCode::kUnavailable,
                 "cannot notify " + name + ": " + std::strerror(send_errno));
  if (static_cast<std::size_t>(sent) != state.size())
    return Error(ErrorCode::kUnavailable, "cannot notify " + name + ": the message was cut");
  return ok_status();
}

}  // namespace holdfast
