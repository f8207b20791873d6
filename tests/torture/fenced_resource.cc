#include "torture/fenced_resource.h"

#include "torture/wall_clock.h"

namespace holdfast::torture {

FencedResource::Outcome FencedResource::write(const std::string& key, std::int64_t token) {
  std::lock_guard lock(mu_);
  std::int64_t& highest = highest_[key];
  Outcome outcome{token >= highest, highest, wall_us()};
  if (outcome.accepted) {
    highest = token;
    ++accepted_;
  } else {
    ++refused_;
  }
  return outcome;
}

std::int64_t FencedResource::highest(const std::string& key) const {
  std::lock_guard lock(mu_);
  const auto it = highest_.find(key);
  return it == highest_.end() ? 0 : it->second;
}

std::int64_t FencedResource::accepted() const {
  std::lock_guard lock(mu_);
  return accepted_;
}

std::int64_t FencedResource::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

}  // namespace holdfast::torture
