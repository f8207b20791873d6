#include "server/call_runner.h"

#include <cassert>

namespace holdfast {

void CallRunner::push(Record record) {
  if (size_ == ring_.size()) {
    std::vector<Record> bigger(ring_.empty() ? 8 : ring_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
    ring_ = std::move(bigger);
    head_ = 0;
  }
  ring_[(head_ + size_) % ring_.size()] = record;
  ++size_;
}

CallRunner::Record CallRunner::pop() {
  Record r = ring_[head_];
  head_ = (head_ + 1) % ring_.size();
  --size_;
  return r;
}

void CallRunner::finish(Result<Answer> result) {
  assert(size_ > 0 && ring_[head_].call);  // calls finish in issue order
  const Record r = pop();
  --calls_;
  ++finished_;
  if (metrics_ != nullptr)
    metrics_->observe(r.command, std::chrono::steady_clock::now() - r.started);
  if (!ended_) host_.answer(r.command, std::move(result));
  while (size_ > 0 && !ring_[head_].call) {
    const Record local = pop();
    if (!ended_) host_.release_local(local.local_bytes);
  }
  const bool resumed = waiting_ && finished_ >= waiting_for_;
  if (resumed) waiting_ = false;
  if (calls_ == 0 && kept_alive_) {
    kept_alive_ = false;
    host_.keep_alive(false);
  }
  if (resumed && !ended_) host_.resume();
}

void CallRunner::end() {
  if (ended_) return;
  ended_ = true;
  service_.end_session(session_);
}

}  // namespace holdfast
