// EventWindow: the last events the bus made, oldest first, for readers that come back with the
// id they saw last (Last-Event-ID), and for the batch being told. A ring of `capacity` slots
// whose strings keep their memory: once it is full, keeping an event allocates nothing (the
// oldest slot takes the newest event). Its capacity may change: the bus keeps a short one
// while no reader could come back (the fewer slots a ring cycles through, the less of the
// cache its writes take from the lock table).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace holdfast::events {

template <typename Event>
class EventWindow {
 public:
  explicit EventWindow(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

  // Forgets every event and keeps at most `capacity` from now on (slots beyond it keep their
  // memory for a later grow()).
  void reset(std::size_t capacity) {
    capacity_ = std::max<std::size_t>(capacity, 1);
    start_ = 0;
    size_ = 0;
  }
  // Keeps up to `capacity` from now on, and every event it holds now.
  void grow(std::size_t capacity) {
    if (capacity <= capacity_) return;
    // A full ring is unwrapped first, so that the oldest is slot 0 and the ring runs on past
    // the old end (one that is not full has not wrapped).
    if (size_ == capacity_) {
      const auto begin = slots_.begin();
      std::rotate(begin, begin + static_cast<std::ptrdiff_t>(start_),
                  begin + static_cast<std::ptrdiff_t>(capacity_));
    }
    start_ = 0;
    capacity_ = capacity;
  }

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The i-th oldest.
  const Event& operator[](std::size_t i) const { return slots_[(start_ + i) % capacity_]; }
  const Event& front() const { return (*this)[0]; }

  // The slot of a new newest event; when full, the oldest's, whose fields still hold it.
  Event& push() {
    if (size_ < capacity_) {
      // Until it is full the ring has not wrapped: start_ is 0 (reset() and grow() keep that).
      if (slots_.size() <= size_) slots_.emplace_back();  // grows while it fills
      return slots_[size_++];
    }
    Event& oldest = slots_[start_];
    start_ = (start_ + 1) % capacity_;
    return oldest;
  }

 private:
  std::size_t capacity_;
  std::vector<Event> slots_;  // may hold more than capacity_ (after a reset)
  std::size_t start_ = 0;     // the oldest's slot
  std::size_t size_ = 0;
};

}  // namespace holdfast::events
