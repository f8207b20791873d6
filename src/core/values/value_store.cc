#include "core/values/value_store.h"

namespace holdfast {
namespace {

// Debian's Abseil has a string_view of its own, which the map's lookups take.
absl::string_view absl_view(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

ValueStore::Map::iterator ValueStore::live(std::string_view key, Millis now) {
  auto it = values_.find(absl_view(key));
  if (it != values_.end() && it->second.cell.expires_at <= now) {
    drop(it);
    return values_.end();
  }
  return it;
}

void ValueStore::drop(Map::iterator it) {
  expiries_.remove(&it->second);
  values_.erase(it);
}

void ValueStore::track_expiry(Slot& slot) {
  if (slot.cell.expires_at == kNever) {
    expiries_.remove(&slot);
  } else {
    expiries_.set(&slot, slot.cell.expires_at);
  }
}

const ValueCell* ValueStore::find(std::string_view key, Millis now) {
  if (values_.empty()) return nullptr;
  const auto it = live(key, now);
  return it == values_.end() ? nullptr : &it->second.cell;
}

Result<ValueOutcome> ValueStore::run_on_none(const ValueRequest& r) {
  ValueCell cell;
  auto out = run_value_op(r, cell);
  if (out.ok() && cell.value) {
    auto [made, inserted] = values_.try_emplace(std::string(r.key));
    made->second.cell = std::move(cell);
    made->second.key = &made->first;
    track_expiry(made->second);
  }
  return out;
}

Result<ValueOutcome> ValueStore::run_on(Map::iterator it, const ValueRequest& r) {
  Slot& slot = it->second;
  auto out = run_value_op(r, slot.cell);
  if (!slot.cell.value) {
    drop(it);
  } else {
    track_expiry(slot);
  }
  return out;
}

bool ValueStore::erase(std::string_view key, Millis now) {
  const auto it = live(key, now);
  if (it == values_.end()) return false;
  drop(it);
  return true;
}

void ValueStore::set_expiry(std::string_view key, Millis at) {
  const auto it = values_.find(absl_view(key));
  if (it == values_.end()) return;
  it->second.cell.expires_at = at;
  track_expiry(it->second);
}

void ValueStore::advance(Millis now) {
  while (!expiries_.empty() && expiries_.top_deadline() <= now) {
    Slot* slot = expiries_.top();
    drop(values_.find(*slot->key));
  }
}

std::optional<Millis> ValueStore::next_deadline() const {
  if (expiries_.empty()) return std::nullopt;
  return expiries_.top_deadline();
}

void ValueStore::restore(std::vector<DurableValue> values, Millis now) {
  values_.reserve(values.size());
  for (DurableValue& v : values) {
    if (v.expires_at <= now) continue;
    auto [it, inserted] = values_.try_emplace(std::move(v.key));
    it->second.cell.value = std::move(v.value);
    it->second.cell.expires_at = v.expires_at;
    it->second.key = &it->first;
    track_expiry(it->second);
  }
}

void ValueStore::for_each(
    const std::function<void(std::string_view, const Value&, Millis)>& fn) const {
  for (const auto& [key, slot] : values_) fn(key, *slot.cell.value, slot.cell.expires_at);
}

}  // namespace holdfast
