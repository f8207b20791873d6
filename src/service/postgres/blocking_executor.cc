#include "service/postgres/blocking_executor.h"

namespace holdfast {

BlockingExecutor::~BlockingExecutor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void BlockingExecutor::submit(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back(std::move(job));
  if (idle_ >= jobs_.size() || threads_.size() >= max_threads_) {
    cv_.notify_one();
    return;
  }
  threads_.emplace_back([this] { work(); });
}

std::size_t BlockingExecutor::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

void BlockingExecutor::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // stopping
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace holdfast
