// Replay. The index maps a key (a view of the key string inside the hold it names) to the
// hold; when a hold is replaced the entry is removed first and re-added after, because the
// replacement moves a new string into the slot and the old view would dangle.
#include "store/wal/replay.h"

#include <algorithm>
#include <type_traits>

namespace holdfast::wal {
namespace {

template <class>
inline constexpr bool kAlwaysFalse = false;

}  // namespace

ReplayState::ReplayState(DurableState base)
    : last_token_(base.last_token),
      base_holds_(std::move(base.holds)),
      rule_set_(std::move(base.rule_set)) {
  for (const HoldState& hold : base_holds_) last_token_ = std::max(last_token_, hold.token);
}

void ReplayState::build_index() {
  index_.reserve(base_holds_.size() + 1024);
  for (HoldState& hold : base_holds_) index_.emplace(hold.key, &hold);
  indexed_ = true;
}

HoldState* ReplayState::find(std::string_view key) {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : it->second;
}

void ReplayState::put(HoldState&& hold) {
  if (HoldState* slot = find(hold.key)) {
    index_.erase(std::string_view(slot->key));
    *slot = std::move(hold);
    index_.emplace(slot->key, slot);
    return;
  }
  HoldState& slot = added_holds_.emplace_back(std::move(hold));
  index_.emplace(slot.key, &slot);
}

void ReplayState::erase(HoldState& hold) {
  index_.erase(std::string_view(hold.key));
  hold.key.clear();
}

void ReplayState::apply(const Change& change) {
  if (!indexed_) build_index();
  std::visit(
      [this](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, Granted>) {
          last_token_ = std::max(last_token_, c.hold.token);
          const HoldState* current = find(c.hold.key);
          if (current != nullptr && current->token > c.hold.token) return;  // stale
          put(HoldState(c.hold));
        } else if constexpr (std::is_same_v<T, Renewed>) {
          HoldState* current = find(c.key);
          if (current != nullptr && current->token == c.token)
            current->lease_expires_at = c.lease_expires_at;
        } else if constexpr (std::is_same_v<T, Released>) {
          HoldState* current = find(c.key);
          if (current != nullptr && current->token == c.token) erase(*current);
        } else if constexpr (std::is_same_v<T, RuleSetPut>) {
          rule_set_ = c;
        } else if constexpr (std::is_same_v<T, RuleSetDeleted>) {
          if (rule_set_ && rule_set_->name == c.name) rule_set_.reset();
        } else {
          static_assert(kAlwaysFalse<T>, "every Change needs a replay rule");
        }
      },
      change);
}

DurableState ReplayState::finish(Millis now) && {
  const auto survives = [now](const HoldState& hold) {
    return !hold.key.empty() && hold.scope == Scope::kLease && hold.lease_expires_at > now;
  };
  index_.clear();  // its views point into the holds about to move
  DurableState state;
  state.last_token = last_token_;
  state.rule_set = std::move(rule_set_);
  state.holds = std::move(base_holds_);
  std::erase_if(state.holds, [&](const HoldState& hold) { return !survives(hold); });
  for (HoldState& hold : added_holds_)
    if (survives(hold)) state.holds.push_back(std::move(hold));
  return state;
}

}  // namespace holdfast::wal
