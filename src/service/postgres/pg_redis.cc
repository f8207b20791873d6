// PgBackend's Redis idiom (docs/redis-locks.md): SET, DEL, PEXPIRE and EXISTS over the same
// rows as the lock commands. Each reads the key's row, decides as the embedded backend does,
// and then acts with a statement conditioned on what it read (the principal, or the token), so
// a row another node changed in between is left alone and the call answers as if it came
// second.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "service/postgres/pg_backend.h"
#include "service/redis_idiom.h"

namespace holdfast {
namespace {

// Owned copies of a list of keys, for a call that runs after the caller's views are gone.
struct Keys {
  explicit Keys(std::span<const std::string_view> keys) : owned(keys.begin(), keys.end()) {}
  std::vector<std::string> owned;
};

}  // namespace

Issued PgBackend::set_value(const Caller& caller, const SetArgs& args, Charge charge,
                            Completion& done) {
  auto copy = std::make_shared<std::pair<std::string, std::string>>(std::string(args.key),
                                                                    std::string(args.value));
  SetArgs kept = args;
  return run(done, [this, caller, kept, copy, charge]() mutable {
    kept.key = copy->first;
    kept.value = copy->second;
    return do_set(caller, kept, charge);
  });
}

Result<Answer> PgBackend::do_set(const Caller& caller, const SetArgs& args, Charge charge) {
  // A typed value is never replaced by a lock: SET NX answers nil (the key exists, as in
  // Redis), every other SET WRONGTYPE (value_rows.h has how the database keeps the two apart).
  const auto on_value = [&args](Error e) -> Result<Answer> {
    if (e.code == ErrorCode::kWrongType && args.condition == SetCondition::kIfAbsent && !args.get)
      return Answer(SetOutcome{});
    return e;
  };
  if (auto err = value_in_the_way(args.key)) return on_value(std::move(*err));
  if (auto err = charge_attempt(*caller.principal, charge)) return std::move(*err);
  Millis db_now = 0;  // the database's clock: leases are on it, never on this node's
  auto found = holds_->find(args.key, &db_now);
  if (!found.ok()) return store_error(std::move(found).error());
  const std::string held_by = caller.principal->held_by();
  std::optional<HoldState>& before = *found;
  if (before && before->mode != LockMode::kExclusive) {
    // A shared or semaphore key is never the caller's own to SET; its newest hold speaks for it.
    auto members = group_members(*before);
    if (!members.ok()) return std::move(members).error();
    if (members->empty()) {
      before.reset();
    } else {
      before = std::move(members->back());
    }
  }
  const bool own = before && before->mode == LockMode::kExclusive &&
                   before->kind == HoldKind::kHandle && before->held_by == held_by;
  SetOutcome out;
  out.get = args.get;
  if (before) out.previous = before->owner;
  // This node's queued acquirers come first: a SET does not jump ahead of them.
  const bool free = !before && !waiters_.has_queue(args.key);
  SetStep step = decide_set(args.condition, before.has_value(), own,
                            before && before->owner == args.value, free);
  if (*args.ttl_ms <= 0) step = already_ended(step);
  const bool keep_end = args.keep_ttl && own && before->lease_expires_at != kNever;
  switch (step) {
    case SetStep::kNothing:
      if (!before) {
        // SET XX on a key that holds no lock: a typed value there is WRONGTYPE, as embedded.
        auto typed = is_value(std::string(args.key));
        if (!typed.ok()) return std::move(typed).error();
        if (*typed) return wrong_type();
      }
      return Answer(out);
    case SetStep::kRefuse:
      return lock_held(args.key);
    case SetStep::kRenew: {
      if (!keep_end) {
        auto moved = db(holds_->extend(args.key, *args.ttl_ms, /*absolute=*/false, before->token));
        if (!moved.ok()) return std::move(moved).error();
        if (!*moved) return lock_held(args.key);  // another node changed the hold meanwhile
        ++counters_.renewals;
        ++counters_.writes;
      }
      out.set = true;
      return Answer(std::move(out));
    }
    case SetStep::kFreeOwn: {
      // As PEXPIREAT to an instant already past: the hold (or its multi-key group) goes.
      ExpireArgs gone;
      gone.key = args.key;
      gone.absolute = true;
      auto freed = do_expire(gone, 0, held_by);
      if (!freed.ok()) return std::move(freed).error();
      out.set = true;
      return Answer(std::move(out));
    }
    case SetStep::kSetGone:
      out.set = true;
      return Answer(std::move(out));
    case SetStep::kTakeOver:
    case SetStep::kTake:
      break;
  }
  pg::GrantRequest g;
  g.key = args.key;
  g.handle = next_handle();
  g.held_by = held_by;
  g.owner = args.value;
  g.ttl_ms = keep_end ? std::max<Millis>(before->lease_expires_at - db_now, 1) : *args.ttl_ms;
  g.scope = Scope::kLease;
  g.node_id = node_id_;
  g.session = caller.session;
  auto granted = db(step == SetStep::kTakeOver ? holds_->take_over(g) : holds_->acquire_free(g));
  if (!granted.ok()) return on_value(std::move(granted).error());
  // A free-looking key that could not be taken is held after all (by a racing node) or closed
  // by a lock-delay: as on a held key, SET refuses while SET NX answers nil.
  if (!granted->granted && step == SetStep::kTake && args.condition == SetCondition::kAlways)
    return lock_held(args.key);
  out.set = granted->granted;
  if (out.set) {
    ++counters_.grants;
    ++counters_.writes;
    if (!own) ++held_;
  }
  return Answer(std::move(out));
}

Issued PgBackend::delete_keys(std::span<const std::string_view> keys,
                              std::optional<std::string_view> only_held_by,
                              std::span<const std::uint8_t> value_writable, Completion& done) {
  auto copy = std::make_shared<Keys>(keys);
  std::optional<std::string> only;
  if (only_held_by) only = std::string(*only_held_by);
  std::vector<std::uint8_t> writable(value_writable.begin(), value_writable.end());
  return run(done, [this, copy, only, writable]() -> Result<Answer> {
    KeyCount deleted;
    for (std::size_t i = 0; i < copy->owned.size(); ++i) {
      const std::string& key = copy->owned[i];
      std::optional<std::string_view> who;
      if (only) who = *only;
      auto freed = delete_lock(key, who);
      if (!freed.ok()) return std::move(freed).error();
      if (*freed) {
        ++deleted.count;
        continue;
      }
      // Not a lock: a typed value, if the rules let the caller delete it (value_rows.h).
      if (!writable.empty() && writable[i] == 0) continue;
      auto gone = values_->remove(key);
      if (!gone.ok()) return store_error(std::move(gone).error());
      if (*gone) {
        ++deleted.count;
        ++counters_.writes;
        tx_lock_keys_.erase(key);
      }
    }
    return Answer(deleted);
  });
}

Result<bool> PgBackend::delete_lock(const std::string& key,
                                    std::optional<std::string_view> only_held_by) {
  // A hold of a multi-key group lets go of the whole group, as on the embedded store.
  auto in_groups = release_groups_on(key, only_held_by);
  if (!in_groups.ok()) return std::move(in_groups).error();
  auto freed = holds_->free_key(key, only_held_by);
  if (!freed.ok()) return store_error(std::move(freed).error());
  if (freed->empty()) {
    // A shared or semaphore key goes as a whole, when all its holds are the caller's.
    auto group = holds_->free_group(key, only_held_by);
    if (!group.ok()) return store_error(std::move(group).error());
    if (!*group) return *in_groups;
  }
  waiters_.poke(key);
  ++counters_.releases;
  ++counters_.writes;
  --held_;
  return true;
}

Result<bool> PgBackend::release_groups_on(std::string_view key,
                                          std::optional<std::string_view> only_held_by) {
  auto groups = holds_->groups_on(key);
  if (!groups.ok()) return store_error(std::move(groups).error());
  bool any = false;
  for (const pg::HoldRows::GroupOnKey& g : *groups) {
    if (only_held_by && g.held_by != *only_held_by) continue;
    auto freed = holds_->release_handle(key, g.handle);
    if (!freed.ok()) return store_error(std::move(freed).error());
    for (const std::string& k : *freed) {
      any = true;
      waiters_.poke(k);
      ++counters_.releases;
      ++counters_.writes;
      --held_;
    }
  }
  return any;
}

Issued PgBackend::expire(const ExpireArgs& args, Millis max_lease_ms, const KeyAccess& access,
                         Completion& done) {
  auto key = std::make_shared<std::string>(args.key);
  std::optional<std::string> only;
  if (access.only_held_by) only = std::string(*access.only_held_by);
  ExpireArgs kept = args;
  return run(done,
             [this, kept, key, only, max_lease_ms, lock_denied = access.lock_denied,
              value_denied = access.value_denied]() mutable -> Result<Answer> {
               kept.key = *key;
               KeyAccess access;
               access.value_denied = value_denied;
               auto on_value =
                   expire_value(kept, access);  // a typed value's expiry, as Redis moves it
               if (!on_value.ok()) return std::move(on_value).error();
               if (*on_value) return std::move(**on_value);
               if (lock_denied) return *lock_denied;
               std::optional<std::string_view> who;
               if (only) who = *only;
               return do_expire(kept, max_lease_ms, who);
             });
}

Result<Answer> PgBackend::do_expire(const ExpireArgs& args, Millis max_lease_ms,
                                    std::optional<std::string_view> only_held_by) {
  Millis t = 0;  // the database's clock: leases are on it, never on this node's
  auto found = holds_->find(args.key, &t);
  if (!found.ok()) return store_error(std::move(found).error());
  const std::optional<HoldState>& hold = *found;
  if (hold && hold->mode != LockMode::kExclusive)
    return do_expire_group(args, max_lease_ms, only_held_by, *hold, t);
  if (!hold || (only_held_by && hold->held_by != *only_held_by)) return Answer(KeyCount{0});
  const auto to = expire_to(args, hold->lease_expires_at, t, max_lease_ms);
  if (!to) return Answer(KeyCount{0});
  const Millis at = *to;
  // The key's one hold may be a multi-key group's: then the whole group moves, or goes.
  auto groups = holds_->groups_on(args.key);
  if (!groups.ok()) return store_error(std::move(groups).error());
  if (!groups->empty()) {
    if (at <= t) {
      auto freed = release_groups_on(args.key, hold->held_by);
      if (!freed.ok()) return std::move(freed).error();
      return Answer(KeyCount{*freed ? 1 : 0});
    }
    auto ends = holds_->renew_handle(args.key, groups->front().handle, at - t);
    if (!ends.ok()) return store_error(std::move(ends).error());
    if (!*ends) return Answer(KeyCount{0});
    ++counters_.renewals;
    ++counters_.writes;
    return Answer(KeyCount{1});
  }
  if (at <= t) {
    // As in Redis, an expiry that has already come deletes the key.
    auto freed = holds_->free_key(args.key, hold->held_by);
    if (!freed.ok()) return store_error(std::move(freed).error());
    if (freed->empty()) return Answer(KeyCount{0});
    waiters_.poke(args.key);
    ++counters_.releases;
    ++counters_.writes;
    --held_;
    return Answer(KeyCount{1});
  }
  auto moved = holds_->extend(args.key, at, /*absolute=*/true, hold->token);
  if (!moved.ok()) return store_error(std::move(moved).error());
  if (!*moved) return Answer(KeyCount{0});  // the hold changed meanwhile
  ++counters_.renewals;
  ++counters_.writes;
  return Answer(KeyCount{1});
}

// PEXPIRE of a shared or semaphore key: every hold's lease, when all are the caller's (or
// anyone's may be changed); the newest hold's lease is the one a relative change starts from.
Result<Answer> PgBackend::do_expire_group(const ExpireArgs& args, Millis max_lease_ms,
                                          std::optional<std::string_view> only_held_by,
                                          const HoldState& group, Millis t) {
  auto members = group_members(group);
  if (!members.ok()) return std::move(members).error();
  if (members->empty()) return Answer(KeyCount{0});
  if (only_held_by && std::any_of(members->begin(), members->end(),
                                  [&](const HoldState& h) { return h.held_by != *only_held_by; }))
    return Answer(KeyCount{0});
  const auto to = expire_to(args, members->back().lease_expires_at, t, max_lease_ms);
  if (!to) return Answer(KeyCount{0});
  // Holds of multi-key groups take their whole groups along.
  auto groups = holds_->groups_on(args.key);
  if (!groups.ok()) return store_error(std::move(groups).error());
  if (*to <= t) {
    auto freed = release_groups_on(args.key, only_held_by);
    if (!freed.ok()) return std::move(freed).error();
  } else {
    for (const pg::HoldRows::GroupOnKey& g : *groups) {
      auto ends = holds_->renew_handle(args.key, g.handle, *to - t);
      if (!ends.ok()) return store_error(std::move(ends).error());
    }
  }
  auto changed = *to <= t ? holds_->free_group(args.key, only_held_by)
                          : holds_->extend_group(args.key, *to, only_held_by);
  if (!changed.ok()) return store_error(std::move(changed).error());
  if (!*changed) return Answer(KeyCount{0});  // the holds changed meanwhile
  ++counters_.writes;
  if (*to <= t) {
    waiters_.poke(args.key);
    ++counters_.releases;
    --held_;
  } else {
    ++counters_.renewals;
  }
  return Answer(KeyCount{1});
}

Issued PgBackend::count_held(std::span<const std::string_view> keys, Completion& done) {
  auto copy = std::make_shared<Keys>(keys);
  return run(done, [this, copy]() -> Result<Answer> {
    KeyCount held;
    for (const std::string& key : copy->owned) {
      auto found = holds_->find(key);
      if (!found.ok()) return store_error(std::move(found).error());
      if (found->has_value()) {
        ++held.count;
        continue;
      }
      auto typed = is_value(key);  // EXISTS counts keys holding a typed value too
      if (!typed.ok()) return std::move(typed).error();
      held.count += *typed ? 1 : 0;
    }
    return Answer(held);
  });
}

}  // namespace holdfast
