#include "core/values/list.h"

#include <cstring>

namespace holdfast {

List::Element::Element(std::string_view bytes)
    : data_(new char[sizeof(std::uint32_t) + bytes.size()]) {
  const auto size = static_cast<std::uint32_t>(bytes.size());
  std::memcpy(data_.get(), &size, sizeof(size));
  if (!bytes.empty()) std::memcpy(data_.get() + sizeof(size), bytes.data(), bytes.size());
}

std::string_view List::Element::view() const {
  std::uint32_t size = 0;
  std::memcpy(&size, data_.get(), sizeof(size));
  return {data_.get() + sizeof(size), size};
}

std::size_t List::remove(std::int64_t count, std::string_view element) {
  std::size_t removed = 0;
  const auto limit = static_cast<std::size_t>(count < 0 ? -(count + 1) + 1 : count);
  if (count >= 0) {
    for (auto it = elements_.begin(); it != elements_.end();) {
      if (it->view() == element) {
        it = elements_.erase(it);
        if (++removed == limit) break;
      } else {
        ++it;
      }
    }
    return removed;
  }
  for (auto it = elements_.end(); it != elements_.begin();) {
    --it;
    if (it->view() == element) {
      it = elements_.erase(it);
      if (++removed == limit) break;
    }
  }
  return removed;
}

}  // namespace holdfast
