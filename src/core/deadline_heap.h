// DeadlineHeap: the lock table's timer index (lease ends, waiter timeouts).
//
// An indexed binary min-heap keyed by deadline. Each item remembers its own position in the
// heap (an index reached through the Index functor), so a renew moves one entry up or down and
// a release removes it in O(log n), with no stale entries left behind. Redis's timeout.c
// instead leaves stale entries and skips them lazily; with leases renewed many times over their
// life the heap would then grow with the renew rate, so the index is worth its 4 bytes per hold.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/clock.h"

namespace holdfast {

inline constexpr std::uint32_t kNotInHeap = 0xffffffffu;

// Index(T*) must return a std::uint32_t& slot inside the item, kNotInHeap when absent.
template <typename T, typename Index>
class DeadlineHeap {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  Millis top_deadline() const { return heap_.front().at; }
  T* top() const { return heap_.front().item; }

  // Adds the item or moves it to its new deadline.
  void set(T* item, Millis at) {
    std::uint32_t& i = Index{}(item);
    if (i == kNotInHeap) {
      i = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back({at, item});
      sift_up(i);
      return;
    }
    Millis old = heap_[i].at;
    heap_[i].at = at;
    if (at < old) {
      sift_up(i);
    } else {
      sift_down(i);
    }
  }

  // Removes the item if present.
  void remove(T* item) {
    std::uint32_t& slot = Index{}(item);
    std::uint32_t i = slot;
    if (i == kNotInHeap) return;
    slot = kNotInHeap;
    std::uint32_t last = static_cast<std::uint32_t>(heap_.size() - 1);
    if (i != last) {
      heap_[i] = heap_[last];
      Index{}(heap_[i].item) = i;
      heap_.pop_back();
      sift_down(i);
      sift_up(i);
    } else {
      heap_.pop_back();
    }
  }

 private:
  struct Node {
    Millis at;
    T* item;
  };

  void place(std::uint32_t i, Node n) {
    heap_[i] = n;
    Index{}(n.item) = i;
  }
  void sift_up(std::uint32_t i) {
    Node n = heap_[i];
    while (i > 0) {
      std::uint32_t parent = (i - 1) / 2;
      if (heap_[parent].at <= n.at) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, n);
  }
  void sift_down(std::uint32_t i) {
    Node n = heap_[i];
    const auto size = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && heap_[child + 1].at < heap_[child].at) ++child;
      if (n.at <= heap_[child].at) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, n);
  }

  std::vector<Node> heap_;
};

}  // namespace holdfast
