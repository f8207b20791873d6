#include "core/deadline_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace holdfast {
namespace {

struct Item {
  Millis at = 0;
  std::uint32_t index = kNotInHeap;
};
struct ItemIndex {
  std::uint32_t& operator()(Item* i) const { return i->index; }
};

TEST(DeadlineHeap, PopsInDeadlineOrderAfterRandomMovesAndRemovals) {
  std::mt19937 rng(7);
  std::vector<Item> items(500);
  DeadlineHeap<Item, ItemIndex> heap;
  for (auto& it : items) {
    it.at = rng() % 10000;
    heap.set(&it, it.at);
  }
  for (int i = 0; i < 2000; ++i) {
    Item& it = items[rng() % items.size()];
    if (rng() % 3 == 0) {
      heap.remove(&it);
      EXPECT_EQ(it.index, kNotInHeap);
    } else {
      it.at = rng() % 10000;
      heap.set(&it, it.at);
    }
  }
  std::size_t expected = std::count_if(items.begin(), items.end(),
                                       [](const Item& i) { return i.index != kNotInHeap; });
  EXPECT_EQ(heap.size(), expected);
  Millis last = -1;
  while (!heap.empty()) {
    Item* top = heap.top();
    EXPECT_EQ(heap.top_deadline(), top->at);
    EXPECT_GE(top->at, last);
    last = top->at;
    heap.remove(top);
  }
}

}  // namespace
}  // namespace holdfast
