// Sockets, deadlines and the handshake (see connection.h for the lifecycle).
#include "client/connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "client/error_map.h"
#include "holdfast/errors.h"

namespace holdfast::inline v0::client_internal {
namespace {

int millis_until(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30));
}

// Waits for `events` on fd until the deadline; false when the deadline passed first.
bool wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, millis_until(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

std::string errno_text(int err) { return std::strerror(err); }

// Starts a non-blocking connect and waits for it; returns the fd or -1 with *err set.
int connect_fd(int domain, const sockaddr* addr, socklen_t len, Deadline deadline, int* err) {
  int fd = ::socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  if (::connect(fd, addr, len) == 0) return fd;
  if (errno != EINPROGRESS && errno != EAGAIN) {
    *err = errno;
    ::close(fd);
    return -1;
  }
  if (!wait_for(fd, POLLOUT, deadline)) {
    *err = ETIMEDOUT;
    ::close(fd);
    return -1;
  }
  int so_error = 0;
  socklen_t so_len = sizeof(so_error);
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &so_len);
  if (so_error != 0) {
    *err = so_error;
    ::close(fd);
    return -1;
  }
  return fd;
}

int connect_tcp(const ServerAddress& a, Deadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(a.port);
  if (int rc = ::getaddrinfo(a.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw ConnectionError("cannot resolve " + a.display() + ": " + ::gai_strerror(rc));
  int err = 0, fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next)
    fd = connect_fd(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline, &err);
  ::freeaddrinfo(found);
  if (fd < 0) throw ConnectionError("cannot connect to " + a.display() + ": " + errno_text(err));
  int one = 1;
  // Commands are small and each waits for its reply: Nagle would only add latency.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

int connect_unix(const ServerAddress& a, Deadline deadline) {
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  if (a.path.size() >= sizeof(sun.sun_path))
    throw ConnectionError("Unix socket path too long: " + a.path);
  std::memcpy(sun.sun_path, a.path.data(), a.path.size());
  int err = 0;
  int fd =
      connect_fd(AF_UNIX, reinterpret_cast<const sockaddr*>(&sun), sizeof(sun), deadline, &err);
  if (fd < 0) throw ConnectionError("cannot connect to " + a.display() + ": " + errno_text(err));
  return fd;
}

}  // namespace

std::unique_ptr<Connection> Connection::open(const ServerAddress& address, Deadline deadline,
                                             const TlsContext* tls) {
  int fd = address.kind == ServerAddress::Kind::kUnix ? connect_unix(address, deadline)
                                                      : connect_tcp(address, deadline);
  std::unique_ptr<Connection> conn(new Connection(fd, address.display()));
  if (address.tls) {
    if (tls == nullptr) throw ConnectionError("no TLS context for " + address.display());
    conn->tls_handshake(*tls, address.host, deadline);
  }
  const bool with_auth = !address.token.empty();
  std::string hello;
  if (with_auth) {
    hello += address.user.empty() ? encode_command({"AUTH", address.token})
                                  : encode_command({"AUTH", address.user, address.token});
  }
  hello += encode_command({"HELLO", "3"});
  conn->send(hello, deadline);
  if (with_auth) {
    Reply auth = conn->first_reply(deadline, "AUTH");
    if (auth.is_error()) throw_server_error(auth.str);
  }
  Reply reply = with_auth ? conn->receive(deadline, "HELLO") : conn->first_reply(deadline, "HELLO");
  if (reply.is_error()) throw_server_error(reply.str);
  const Reply* server = reply.field("server");
  if (server == nullptr || server->str != "holdfast")
    throw ProtocolError(address.display() + " is not a Holdfast server (HELLO answered " +
                        reply.debug().substr(0, 80) + ")");
  return conn;
}

Reply Connection::first_reply(Deadline deadline, std::string_view command) {
  try {
    return receive(deadline, command);
  } catch (const ProtocolError& e) {
    // Not RESP from the first byte: say what the peer is, if it can be told, rather than
    // which byte the parser choked on. An HTTP server answers a RESP command with a 400.
    if (in_.starts_with("HTTP/"))
      throw ProtocolError(peer_ + " answered with HTTP, not RESP", {{"protocol", "http"}});
    throw ProtocolError(peer_ + " did not answer in RESP (" + e.what() + ")",
                        {{"protocol", "unknown"}});
  }
}

Connection::~Connection() {
  if (tls_ && !broken_) tls_->shutdown();  // close_notify, if the socket takes it at once
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
}

void Connection::tls_handshake(const TlsContext& context, const std::string& host,
                               Deadline deadline) {
  tls_ = std::make_unique<TlsSession>(context, fd_, host);
  for (;;) {
    const TlsSession::Io io = tls_->handshake();
    if (io == TlsSession::Io::kDone) return;
    if (io == TlsSession::Io::kWantRead || io == TlsSession::Io::kWantWrite) {
      if (!wait_for(fd_, io == TlsSession::Io::kWantRead ? POLLIN : POLLOUT, deadline))
        fail("TLS handshake with " + peer_ + " timed out");
      continue;
    }
    fail("TLS handshake with " + peer_ + " failed: " +
         (io == TlsSession::Io::kClosed ? std::string("the server closed the connection")
                                        : tls_->error()));
  }
}

void Connection::tls_send(std::string_view bytes, Deadline deadline) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    std::size_t n = 0;
    const TlsSession::Io io = tls_->write(bytes.data() + off, bytes.size() - off, &n);
    if (io == TlsSession::Io::kDone) {
      off += n;
      continue;
    }
    if (io == TlsSession::Io::kWantRead || io == TlsSession::Io::kWantWrite) {
      if (!wait_for(fd_, io == TlsSession::Io::kWantRead ? POLLIN : POLLOUT, deadline))
        fail("timed out sending to " + peer_);
      continue;
    }
    fail("connection to " + peer_ + " lost while sending: " +
         (io == TlsSession::Io::kClosed ? std::string("closed by the server") : tls_->error()));
  }
}

bool Connection::tls_receive_some(Deadline deadline, std::string_view command) {
  const std::string unknown_outcome = " (the call may or may not have taken effect)";
  for (;;) {
    char buf[16384];
    std::size_t n = 0;
    const TlsSession::Io io = tls_->read(buf, sizeof(buf), &n);
    if (io == TlsSession::Io::kDone) {
      in_.append(buf, n);
      return true;
    }
    if (io == TlsSession::Io::kWantRead || io == TlsSession::Io::kWantWrite) {
      if (!wait_for(fd_, io == TlsSession::Io::kWantRead ? POLLIN : POLLOUT, deadline))
        return false;
      continue;
    }
    if (io == TlsSession::Io::kClosed)
      fail("connection to " + peer_ + " closed by the server while waiting for the reply to " +
           std::string(command) + unknown_outcome);
    fail("connection to " + peer_ + " lost while waiting for the reply to " + std::string(command) +
         ": " + tls_->error() + unknown_outcome);
  }
}

void Connection::fail(const std::string& message) {
  broken_ = true;
  throw ConnectionError(message);
}

void Connection::send(std::string_view bytes, Deadline deadline) {
  if (broken_) fail("connection to " + peer_ + " is broken");
  if (tls_) {
    tls_send(bytes, deadline);
    return;
  }
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd_, POLLOUT, deadline)) fail("timed out sending to " + peer_);
      continue;
    }
    fail("connection to " + peer_ + " lost while sending: " + errno_text(errno));
  }
}

Reply Connection::receive(Deadline deadline, std::string_view command) {
  const std::string unknown_outcome = " (the call may or may not have taken effect)";
  for (;;) {
    try {
      if (const std::size_t length = framer_.complete_length(in_)) {
        auto parsed = parse_reply(std::string_view(in_).substr(0, length));
        framer_.reset();
        if (!parsed || parsed->consumed != length)
          throw ProtocolError("malformed reply from the server: its framing is inconsistent");
        in_.erase(0, length);
        return std::move(parsed->reply);
      }
    } catch (const ProtocolError&) {
      broken_ = true;
      throw;
    }
    if (tls_) {
      if (!tls_receive_some(deadline, command))
        fail("no reply from " + peer_ + " to " + std::string(command) +
             " in time; connection closed" + unknown_outcome);
      continue;
    }
    if (!wait_for(fd_, POLLIN, deadline))
      fail("no reply from " + peer_ + " to " + std::string(command) +
           " in time; connection closed" + unknown_outcome);
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      in_.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      fail("connection to " + peer_ + " closed by the server while waiting for the reply to " +
           std::string(command) + unknown_outcome);
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      fail("connection to " + peer_ + " lost while waiting for the reply to " +
           std::string(command) + ": " + errno_text(errno) + unknown_outcome);
    }
  }
}

bool Connection::usable() const {
  if (broken_ || !in_.empty()) return false;
  // Idle, nothing should arrive: readable means the peer closed (EOF) or broke the protocol.
  pollfd p{fd_, POLLIN, 0};
  int n = ::poll(&p, 1, 0);
  if (n == 0) return !tls_ || !tls_->pending();
  if (!tls_) return false;
  // Over TLS the server may have sent records that carry no reply (TLS 1.3 session tickets):
  // reading them finds nothing for the application, and the connection is as good as before.
  return tls_->peek() == TlsSession::Io::kWantRead;
}

}  // namespace holdfast::inline v0::client_internal
