// Replay. A released hold stays in place with alive_ cleared, so its key keeps its index slot
// and a later grant on the same key reuses it: the index grows with distinct keys, not with
// the length of the log, and needs no deletion.
#include "store/wal/replay.h"

#include <algorithm>
#include <functional>
#include <type_traits>

#include "store/wal/format.h"
#include "store/wal/horizon.h"

namespace holdfast::wal {
namespace {

std::uint32_t hash_key(std::string_view key) {
  const std::size_t h = std::hash<std::string_view>{}(key);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

}  // namespace

ReplayState::ReplayState(DurableState base)
    : last_token_(base.last_token),
      base_(std::move(base.holds)),
      rule_set_(std::move(base.rule_set)) {
  values_.reserve(base.values.size());
  for (DurableValue& v : base.values)
    values_[std::move(v.key)] = ValueCell{std::move(v.value), v.expires_at};
  const auto is_share = [](const HoldState& h) { return h.mode != LockMode::kExclusive; };
  if (std::none_of(base_.begin(), base_.end(), is_share)) return;
  for (HoldState& h : base_)
    if (is_share(h)) shares_.emplace(h.token, std::move(h));
  std::erase_if(base_, is_share);  // a moved-from hold keeps its mode
}

void ReplayState::build_index() {
  std::size_t size = 1024;
  while (size * 7 < (base_.size() + 1024) * 10) size *= 2;
  slots_.assign(size, Slot{});
  alive_.assign(base_.size(), true);
  for (Position p = 0; p < base_.size(); ++p) insert(hash_key(base_[p].key), p);
  indexed_ = true;
}

std::optional<ReplayState::Position> ReplayState::find(std::string_view key, std::uint32_t hash) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.position_plus_one == 0) return std::nullopt;
    if (slot.hash == hash && at(slot.position_plus_one - 1).key == key)
      return slot.position_plus_one - 1;
  }
}

void ReplayState::insert(std::uint32_t hash, Position position) {
  if ((used_slots_ + 1) * 10 > slots_.size() * 7) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i].position_plus_one != 0) i = (i + 1) & mask;
  slots_[i] = Slot{hash, position + 1};
  ++used_slots_;
}

void ReplayState::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.position_plus_one == 0) continue;
    std::size_t i = slot.hash & mask;
    while (slots_[i].position_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

HoldState* ReplayState::live(std::string_view key) {
  const std::optional<Position> p = find(key, hash_key(key));
  return p && alive_[*p] ? &at(*p) : nullptr;
}

void ReplayState::put(const HoldState& hold) {
  const std::uint32_t hash = hash_key(hold.key);
  if (const std::optional<Position> p = find(hold.key, hash)) {
    at(*p) = hold;
    alive_[*p] = true;
    return;
  }
  const auto position = static_cast<Position>(base_.size() + added_.size());
  added_.push_back(hold);
  alive_.push_back(true);
  insert(hash, position);
}

void ReplayState::grant(const HoldState& hold) {
  last_token_ = std::max(last_token_, hold.token);
  last_record_at_ = std::max(last_record_at_, hold.acquired_at);
  if (hold.mode != LockMode::kExclusive) {
    shares_[hold.token] = hold;
    return;
  }
  const HoldState* current = live(hold.key);
  if (current != nullptr && current->token > hold.token) return;  // stale
  put(hold);
}

void ReplayState::apply(const Change& change) {
  if (!indexed_) build_index();
  std::visit(
      [this](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, Granted>) {
          grant(c.hold);
        } else if constexpr (std::is_same_v<T, GroupGranted>) {
          for (const HoldState& hold : c.holds) grant(hold);  // one record: all or none
        } else if constexpr (std::is_same_v<T, Renewed>) {
          HoldState* current = live(c.key);
          if (current != nullptr && current->token == c.token) {
            current->lease_expires_at = c.lease_expires_at;
          } else if (auto share = shares_.find(c.token);
                     share != shares_.end() && share->second.key == c.key) {
            share->second.lease_expires_at = c.lease_expires_at;
          }
        } else if constexpr (std::is_same_v<T, Released>) {
          const std::optional<Position> p = find(c.key, hash_key(c.key));
          if (p && alive_[*p] && at(*p).token == c.token) {
            alive_[*p] = false;
          } else if (auto share = shares_.find(c.token);
                     share != shares_.end() && share->second.key == c.key) {
            shares_.erase(share);
          }
        } else if constexpr (std::is_same_v<T, RuleSetPut>) {
          rule_set_ = c;
        } else if constexpr (std::is_same_v<T, RuleSetDeleted>) {
          if (rule_set_ && rule_set_->name == c.name) rule_set_.reset();
        } else if constexpr (std::is_same_v<T, LeaseHorizon>) {
          horizon_ = c;
          last_token_ = std::max(last_token_, c.tokens_through);
          last_record_at_ = std::max(last_record_at_, c.written_at);
        } else if constexpr (std::is_same_v<T, ValueEdit>) {
          ValueCell& cell = values_[c.key];
          apply_edit(c, cell.value, cell.expires_at);
          if (!cell.value) values_.erase(c.key);
        } else {
          static_assert(kUnhandled<T>, "every Change needs a replay rule");
        }
      },
      change);
}

DurableState ReplayState::finish(Millis now) && {
  const auto survives = [now](const HoldState& hold) {
    // A hold whose lease ended with a lock-delay still running stays: the table re-derives
    // the delay from it (docs/lock-kinds.md, "Lock-delay").
    return hold.scope == Scope::kLease &&
           (hold.lease_expires_at > now || hold.lease_expires_at + hold.lock_delay_ms > now);
  };
  DurableState state;
  state.rule_set = std::move(rule_set_);
  state.holds = std::move(base_);
  // One pass over the snapshot's holds: the token high-water mark, and compaction in place.
  std::vector<HoldState>& holds = state.holds;
  const std::size_t base_count = holds.size();
  std::size_t kept = 0;
  for (std::size_t p = 0; p < base_count; ++p) {
    last_token_ = std::max(last_token_, holds[p].token);
    if ((!indexed_ || alive_[p]) && survives(holds[p])) {
      if (kept != p) holds[kept] = std::move(holds[p]);
      ++kept;
    }
  }
  holds.erase(holds.begin() + static_cast<std::ptrdiff_t>(kept), holds.end());
  for (std::size_t j = 0; j < added_.size(); ++j)
    if (alive_[base_count + j] && survives(added_[j])) holds.push_back(std::move(added_[j]));
  // Oldest first, as the table keeps a key's holds.
  const std::size_t shares_from = holds.size();
  for (auto& [token, hold] : shares_) {
    last_token_ = std::max(last_token_, token);
    if (survives(hold)) holds.push_back(std::move(hold));
  }
  std::sort(holds.begin() + static_cast<std::ptrdiff_t>(shares_from), holds.end(),
            [](const HoldState& a, const HoldState& b) { return a.token < b.token; });
  state.last_token = last_token_;
  state.grants_closed_until = quarantine_end(horizon_, last_record_at_, now);
  state.values.reserve(values_.size());
  for (auto& [key, cell] : values_) {
    if (cell.value && cell.expires_at > now)
      state.values.push_back(DurableValue{key, std::move(*cell.value), cell.expires_at});
  }
  return state;
}

}  // namespace holdfast::wal
