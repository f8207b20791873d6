// A fake peer for failure paths the real server cannot be made to show on demand (an
// authentication refusal before auth exists in open mode, a non-Holdfast server): it listens on
// 127.0.0.1, accepts every connection and answers each chunk it reads with fixed bytes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace holdfast::testing {

class FakeServer {
 public:
  explicit FakeServer(std::string reply) : reply_(std::move(reply)) {
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
      if (fds[0].revents & POLLIN) clients_.push_back(::accept(fd_, nullptr, nullptr));
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        char buf[4096];
        if (::read(fds[i].fd, buf, sizeof(buf)) > 0) {
          (void)!::write(fds[i].fd, reply_.data(), reply_.size());
        } else {
          ::close(fds[i].fd);
          clients_[i - 1] = -1;  // poll() skips negative descriptors
        }
      }
    }
  }

  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

}  // namespace holdfast::testing
