#include "core/values/zset.h"

#include <cstring>
#include <iterator>
#include <new>
#include <vector>

#include <absl/hash/hash.h>

namespace holdfast {

std::size_t ZSet::MemberHash::operator()(std::string_view m) const {
  return absl::Hash<std::string_view>{}(m);
}

ZSet::Node* ZSet::make_node(std::string_view member, double score) {
  void* memory = ::operator new(sizeof(Node) + member.size());
  auto* node = new (memory) Node{score, static_cast<std::uint32_t>(member.size())};
  if (!member.empty()) std::memcpy(node + 1, member.data(), member.size());
  return node;
}

void ZSet::free_node(Node* node) { ::operator delete(node); }

ZSet::~ZSet() { clear(); }

ZSet::ZSet(const ZSet& other) {
  index_.reserve(other.size());
  for (const Node* n : other.order_) put(n->member(), n->score);
}

ZSet& ZSet::operator=(const ZSet& other) {
  if (this != &other) {
    ZSet copy(other);
    *this = std::move(copy);
  }
  return *this;
}

ZSet::ZSet(ZSet&& other) noexcept
    : order_(std::move(other.order_)), index_(std::move(other.index_)) {
  other.order_.clear();
  other.index_.clear();
}

ZSet& ZSet::operator=(ZSet&& other) noexcept {
  if (this != &other) {
    clear();
    order_ = std::move(other.order_);
    index_ = std::move(other.index_);
    other.order_.clear();
    other.index_.clear();
  }
  return *this;
}

void ZSet::clear() {
  for (Node* n : order_) free_node(n);
  order_.clear();
  index_.clear();
}

std::optional<double> ZSet::score(std::string_view member) const {
  const auto it = index_.find(member);
  if (it == index_.end()) return std::nullopt;
  return (*it)->score;
}

bool ZSet::put(std::string_view member, double score) {
  const auto it = index_.find(member);
  if (it != index_.end()) {
    Node* node = *it;
    if (node->score == score) return false;
    // The score is part of the order's key: out, changed, back in.
    order_.erase(node);
    node->score = score;
    order_.insert(node);
    return false;
  }
  Node* node = make_node(member, score);
  index_.insert(node);
  order_.insert(node);
  return true;
}

bool ZSet::remove(std::string_view member) {
  const auto it = index_.find(member);
  if (it == index_.end()) return false;
  Node* node = *it;
  index_.erase(it);
  order_.erase(node);
  free_node(node);
  return true;
}

std::optional<std::size_t> ZSet::rank(std::string_view member) const {
  const auto it = index_.find(member);
  if (it == index_.end()) return std::nullopt;
  return static_cast<std::size_t>(std::distance(order_.begin(), order_.find(*it)));
}

ZSet::const_iterator ZSet::lower(const ScoreRange& range) const {
  return order_.lower_bound(Probe{range.min.value, {}, range.min.exclusive ? 1 : -1});
}

ZSet::const_iterator ZSet::upper(const ScoreRange& range) const {
  return order_.lower_bound(Probe{range.max.value, {}, range.max.exclusive ? -1 : 1});
}

ZSet::const_iterator ZSet::at_rank(std::size_t rank) const {
  return std::next(order_.begin(), static_cast<std::ptrdiff_t>(rank));
}

std::size_t ZSet::erase(const_iterator first, const_iterator last) {
  std::vector<Node*> gone(first, last);
  for (Node* n : gone) index_.erase(n);
  order_.erase(first, last);
  for (Node* n : gone) free_node(n);
  return gone.size();
}

}  // namespace holdfast
