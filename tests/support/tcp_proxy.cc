#include "support/tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace holdfast::testing {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return addr;
}

}  // namespace

TcpProxy::TcpProxy(int target_port) : target_(target_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = loopback(0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0)
    throw std::runtime_error("TcpProxy: cannot listen on loopback");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  if (::pipe2(wake_, O_CLOEXEC) != 0) throw std::runtime_error("TcpProxy: pipe failed");
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  (void)!::write(wake_[1], "x", 1);
  acceptor_.join();
  {
    std::lock_guard lock(mu_);
    for (auto& p : pairs_) {
      ::shutdown(p->client, SHUT_RDWR);
      ::shutdown(p->server, SHUT_RDWR);
    }
  }
  for (auto& t : threads_) t.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void TcpProxy::redirect(int target_port) {
  std::lock_guard lock(mu_);
  target_ = target_port;
  ++generation_;
  // The pumps see their sockets end and close them.
  for (auto& p : pairs_) {
    ::shutdown(p->client, SHUT_RDWR);
    ::shutdown(p->server, SHUT_RDWR);
  }
  pairs_.clear();
}

void TcpProxy::accept_loop() {
  while (!stopping_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) <= 0 || stopping_) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard lock(mu_);
    threads_.emplace_back([this, client] { pump(client); });
  }
}

void TcpProxy::pump(int client) {
  // Connecting here, not in the accept loop: a frozen target may keep it waiting.
  const int generation = generation_.load();
  const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(target_.load());
  if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (server >= 0) ::close(server);
    ::close(client);  // the target is down: the client sees its connection closed
    return;
  }
  const int one = 1;
  ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto pair = std::make_shared<Pair>(Pair{client, server});
  {
    std::lock_guard lock(mu_);
    if (stopping_ || generation != generation_.load()) {  // made for the old target
      ::close(client);
      ::close(server);
      return;
    }
    pairs_.push_back(pair);
  }
  char buffer[16384];
  for (;;) {
    pollfd fds[2] = {{pair->client, POLLIN, 0}, {pair->server, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    bool done = false;
    for (int i = 0; i < 2 && !done; ++i) {
      if (fds[i].revents == 0) continue;
      const int from = i == 0 ? pair->client : pair->server;
      const int to = i == 0 ? pair->server : pair->client;
      const ssize_t n = ::read(from, buffer, sizeof buffer);
      if (n <= 0) {
        done = true;
        break;
      }
      for (ssize_t sent = 0; sent < n;) {
        // send, not write: a side that closed (a server killed, a connection the proxy cut at
        // a promotion) must end this pair, not raise SIGPIPE in the program that runs it.
        const ssize_t w =
            ::send(to, buffer + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
        if (w <= 0) {
          done = true;
          break;
        }
        sent += w;
      }
    }
    if (done) break;
  }
  {
    std::lock_guard lock(mu_);
    std::erase(pairs_, pair);
  }
  ::shutdown(pair->client, SHUT_RDWR);
  ::shutdown(pair->server, SHUT_RDWR);
  ::close(pair->client);
  ::close(pair->server);
}

}  // namespace holdfast::testing
