// EventWindow: the last events the bus made, oldest first, for readers that come back with the
// id they saw last (Last-Event-ID), and for the batch being told. A ring of `capacity` slots
// whose strings keep their memory: once it is full, keeping an event allocates nothing (the
// oldest slot takes the newest event).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace holdfast::events {

template <typename Event>
class EventWindow {
 public:
  explicit EventWindow(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The i-th oldest.
  const Event& operator[](std::size_t i) const { return slots_[(start_ + i) % capacity_]; }
  const Event& front() const { return (*this)[0]; }

  // The slot of a new newest event; when full, the oldest's, whose fields still hold it.
  Event& push() {
    if (size_ < capacity_) {
      if (slots_.size() < capacity_) slots_.emplace_back();  // grows while it fills
      ++size_;
      return slots_[(start_ + size_ - 1) % capacity_];
    }
    Event& oldest = slots_[start_];
    start_ = (start_ + 1) % capacity_;
    return oldest;
  }

 private:
  std::size_t capacity_;
  std::vector<Event> slots_;
  std::size_t start_ = 0;  // the oldest's slot
  std::size_t size_ = 0;
};

}  // namespace holdfast::events
