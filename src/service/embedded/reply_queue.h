// ReplyQueue: answers that wait for the write-ahead log, in the order they were made.
//
// Each entry carries the log sequence it must wait for (everything appended when the answer
// was made: an answer may depend on any change before it). Sequences only grow along the queue,
// so the entries ready to leave are always a prefix. A ring over a vector: slots are reused, so
// once the queue has grown to the load's depth it allocates nothing.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "service/lock_service.h"

namespace holdfast {

class ReplyQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(std::uint64_t sequence, Completion& done, Result<Answer> result) {
    if (size_ == slots_.size()) grow();
    Entry& e = slots_[(head_ + size_) % slots_.size()];
    e.sequence = sequence;
    e.done = &done;
    e.result = std::move(result);
    ++size_;
  }

  // Whether an answer for `done` is waiting (its next one must follow it). A scan: used only
  // while the store is at fault.
  bool waits_for(const Completion& done) const {
    for (std::size_t i = 0; i < size_; ++i)
      if (slots_[(head_ + i) % slots_.size()].done == &done) return true;
    return false;
  }

  // Finishes, in order, every entry whose sequence is at most `durable`. A finish may push new
  // entries (a reply that makes another); those wait for the next call.
  void release(std::uint64_t durable) {
    for (std::size_t n = size_; n > 0 && slots_[head_].sequence <= durable; --n) {
      Entry& e = slots_[head_];
      Completion* done = e.done;
      Result<Answer> result = std::move(e.result);
      e.result = Answer{};  // drop what the moved-from answer still owns
      head_ = (head_ + 1) % slots_.size();
      --size_;
      done->finish(std::move(result));
    }
  }

 private:
  struct Entry {
    std::uint64_t sequence = 0;
    Completion* done = nullptr;
    Result<Answer> result = Answer{};
  };

  void grow() {
    std::vector<Entry> bigger(slots_.empty() ? 64 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i)
      bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<Entry> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace holdfast
