// ZSet: a sorted set as Redis keeps one, members ordered by (score, member bytes), each member
// once.
//
// Layout: each member is one allocation holding its score and bytes (16 bytes plus the member),
// which never moves while the member is in the set. Two indexes point at it: a B-tree ordered
// by (score, member) for ranges, and a hash set on the member bytes for ZSCORE, ZADD and ZREM.
// About 40 bytes of indexes per member plus the allocation (bench/README.md, "memory per
// element", compares it with Redis's).
//
// Ranks are counted by walking the B-tree: ZRANK, a ZRANGE from rank r and ZREMRANGEBYRANK
// are O(r) here where Redis's skip list is O(log n). With at most kMaxValueElements members
// per set (core/values/limits.h) that is a few microseconds at worst.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_set.h>

#include "core/values/redis_numbers.h"

namespace holdfast {

class ZSet {
 public:
  struct Node {
    double score;
    std::uint32_t size;
    std::string_view member() const { return {reinterpret_cast<const char*>(this + 1), size}; }
  };

 private:
  // A position in the order: before or after every member of `score` (`member` unused), or at
  // (score, member).
  struct Probe {
    double score;
    std::string_view member;
    int side = 0;  // -1 before every member of the score, +1 after, 0 at `member`
  };
  struct Less {
    using is_transparent = void;
    bool operator()(const Node* a, const Node* b) const {
      return a->score < b->score || (a->score == b->score && a->member() < b->member());
    }
    bool operator()(const Node* a, const Probe& p) const {
      if (a->score != p.score) return a->score < p.score;
      return p.side == 0 ? a->member() < p.member : p.side > 0;
    }
    bool operator()(const Probe& p, const Node* a) const {
      if (a->score != p.score) return p.score < a->score;
      return p.side == 0 ? p.member < a->member() : p.side < 0;
    }
  };
  struct MemberHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view m) const;
    std::size_t operator()(const Node* n) const { return (*this)(n->member()); }
  };
  struct MemberEq {
    using is_transparent = void;
    static std::string_view of(std::string_view m) { return m; }
    static std::string_view of(const Node* n) { return n->member(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return of(a) == of(b);
    }
  };
  using Order = absl::btree_set<Node*, Less>;

 public:
  using const_iterator = Order::const_iterator;

  ZSet() = default;
  ~ZSet();
  ZSet(const ZSet& other);
  ZSet& operator=(const ZSet& other);
  ZSet(ZSet&& other) noexcept;
  ZSet& operator=(ZSet&& other) noexcept;

  std::size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  std::optional<double> score(std::string_view member) const;
  // Adds `member` with `score`, or moves it there. True when it was added.
  bool put(std::string_view member, double score);
  // False when `member` was not in the set.
  bool remove(std::string_view member);
  // The member's rank from the lowest score, 0 first (O(rank)).
  std::optional<std::size_t> rank(std::string_view member) const;

  // In (score, member) order.
  const_iterator begin() const { return order_.begin(); }
  const_iterator end() const { return order_.end(); }
  // The first member not below range.min, and the first one above range.max.
  const_iterator lower(const ScoreRange& range) const;
  const_iterator upper(const ScoreRange& range) const;
  // The member at `rank` (O(rank)). REQUIRES: rank < size().
  const_iterator at_rank(std::size_t rank) const;
  // Removes [first, last); answers how many went.
  std::size_t erase(const_iterator first, const_iterator last);

  void clear();

 private:
  static Node* make_node(std::string_view member, double score);
  static void free_node(Node* node);

  Order order_;
  absl::flat_hash_set<Node*, MemberHash, MemberEq> index_;
};

}  // namespace holdfast
