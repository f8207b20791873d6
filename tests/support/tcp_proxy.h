// A TCP proxy on loopback that forwards every connection to one target port, and can be
// pointed elsewhere: the single address a database client sees when a load balancer (HAProxy
// with its health check and `on-marked-down shutdown-sessions`) sends it to whichever server
// is the primary. redirect() closes every connection made so far, as that balancer does when
// it marks the old server down, and sends new ones to the new target.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace holdfast::testing {

class TcpProxy {
 public:
  explicit TcpProxy(int target_port);  // listens on a free loopback port; throws on failure
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  void redirect(int target_port);

 private:
  struct Pair {
    int client = -1;
    int server = -1;
  };
  void accept_loop();
  // One accepted connection: connects to the target, then copies both ways until either
  // side ends.
  void pump(int client);

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<int> target_;
  std::atomic<int> generation_{0};  // moves on with every redirect()
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::shared_ptr<Pair>> pairs_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace holdfast::testing
