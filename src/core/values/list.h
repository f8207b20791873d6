// List: a Redis list, elements in order, pushed and popped at both ends.
//
// A deque of one pointer per element, each pointing at one allocation of the element's length
// and bytes: 8 bytes of deque plus the allocation per element. Indexing is O(1); LREM is O(n)
// as in Redis.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>

namespace holdfast {

class List {
 public:
  std::size_t size() const { return elements_.size(); }
  bool empty() const { return elements_.empty(); }
  std::string_view at(std::size_t i) const { return elements_[i].view(); }
  void push_front(std::string_view element) { elements_.emplace_front(element); }
  void push_back(std::string_view element) { elements_.emplace_back(element); }
  void pop_front() { elements_.pop_front(); }
  void pop_back() { elements_.pop_back(); }
  // LREM: removes up to |count| elements equal to `element`, from the head when count > 0,
  // from the tail when count < 0, all when 0. Answers how many went.
  std::size_t remove(std::int64_t count, std::string_view element);
  void clear() { elements_.clear(); }

 private:
  // An element's bytes behind one pointer: its length (4 bytes), then the bytes.
  class Element {
   public:
    explicit Element(std::string_view bytes);
    Element(const Element& other) : Element(other.view()) {}
    Element& operator=(const Element& other) {
      if (this != &other) *this = Element(other.view());
      return *this;
    }
    Element(Element&&) noexcept = default;
    Element& operator=(Element&&) noexcept = default;
    std::string_view view() const;

   private:
    std::unique_ptr<char[]> data_;
  };

  std::deque<Element> elements_;
};

}  // namespace holdfast
