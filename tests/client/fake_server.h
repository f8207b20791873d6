// A fake peer for failure paths the real server cannot be made to show on demand (an
// authentication refusal before auth exists in open mode, a non-Holdfast server): it listens on
// 127.0.0.1 and accepts every connection. The n-th chunk read on a connection is answered with
// replies[n] (the last one repeats): the client writes its handshake in one chunk, then one
// chunk per command.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace holdfast::testing {

class FakeServer {
 public:
  explicit FakeServer(std::string reply) : FakeServer(std::vector<std::string>{std::move(reply)}) {}
  explicit FakeServer(std::vector<std::string> replies) : replies_(std::move(replies)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 16) != 0)
      throw std::runtime_error("FakeServer: bind/listen failed");
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    for (int c : clients_)
      if (c >= 0) ::close(c);
    ::close(fd_);
  }
  int port() const { return port_; }
  std::string url() const { return "holdfast://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      for (int c : clients_) fds.push_back({c, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        clients_.push_back(::accept(fd_, nullptr, nullptr));
        chunks_.push_back(0);
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        char buf[4096];
        if (::read(fds[i].fd, buf, sizeof(buf)) > 0) {
          const std::string& reply = replies_[std::min(chunks_[i - 1]++, replies_.size() - 1)];
          (void)!::write(fds[i].fd, reply.data(), reply.size());
        } else {
          ::close(fds[i].fd);
          clients_[i - 1] = -1;  // poll() skips negative descriptors
        }
      }
    }
  }

  std::vector<std::string> replies_;
  std::vector<std::size_t> chunks_;  // per client: chunks read so far
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

}  // namespace holdfast::testing
