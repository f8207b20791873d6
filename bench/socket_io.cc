#include "socket_io.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace holdfast::bench {

bool send_buffered(EventLoop& loop, IoHandler* handler, int fd, ByteBuffer& out, bool& want_write,
                   std::string& error) {
  while (!out.empty()) {
    const std::string_view data = out.view();
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out.consume(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      // The socket buffer is full (deep pipelines): finish when it drains.
      if (!want_write) {
        want_write = true;
        loop.rewatch(fd, EPOLLIN | EPOLLOUT, handler);
      }
      return true;
    }
    error = std::strerror(errno);
    return false;
  }
  if (want_write) {
    want_write = false;
    loop.rewatch(fd, EPOLLIN, handler);
  }
  return true;
}

bool recv_buffered(int fd, ByteBuffer& in, std::string& error) {
  char* space = in.reserve(32768);
  const ssize_t n = recv(fd, space, in.room(), 0);
  if (n > 0) {
    in.commit(static_cast<std::size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  error = n == 0 ? "server closed the connection" : std::strerror(errno);
  return false;
}

}  // namespace holdfast::bench
