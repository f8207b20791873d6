// BlockingExecutor: runs calls that may block (database round trips, a blocking acquire that
// waits inside the call) off the event loop. A job runs on an idle worker; when none is idle a
// new worker starts, up to a cap, so a hundred waiting acquires never starve a quick status.
// Workers stay for reuse. Used only when the LockService says its calls block.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace holdfast {

class BlockingExecutor {
 public:
  explicit BlockingExecutor(std::size_t max_threads = 2048) : max_threads_(max_threads) {}
  virtual ~BlockingExecutor();
  BlockingExecutor(const BlockingExecutor&) = delete;
  BlockingExecutor& operator=(const BlockingExecutor&) = delete;

  // Virtual for the socket fuzzers, which queue jobs and run them in an order of their choosing
  // on their own thread (fuzz/socket_harness.h).
  virtual void submit(std::function<void()> job);
  std::size_t threads() const;

 private:
  void work();

  const std::size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace holdfast
