#include "store/wal/horizon.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <variant>

namespace holdfast::wal {

Millis quarantine_end(const std::optional<LeaseHorizon>& last, Millis last_record_at, Millis now) {
  if (!last) return 0;
  // A clock that went back since the last record must not shorten the wait: count from the
  // later of the two, as if no time had passed while the server was down.
  // No lease answered lasts longer than max_lease from an instant before the stop, so none
  // ends later than max_lease from now either: the wait is the shorter of the two bounds.
  const Millis remaining =
      std::min(last->until - std::max({now, last_record_at, last->written_at}), last->max_lease);
  return remaining > 0 ? now + remaining : 0;
}

void HorizonKeeper::start(const DurableState& state) {
  quarantine_until_ = state.grants_closed_until;
  asked_ = LeaseHorizon{state.grants_closed_until, state.last_token, 0, false, 0};
  durable_ = asked_;
  in_flight_.clear();
  unbounded_.clear();
  for (const HoldState& hold : state.holds) {
    if (hold.lease_expires_at == kNever) unbounded_.insert(hold.token);
    longest_delay_ = std::max(longest_delay_, hold.lock_delay_ms);
  }
}

HorizonKeeper::Need HorizonKeeper::classify(const Change& change, Millis now,
                                            std::uint64_t synced) {
  catch_up(synced);
  Need need;
  std::optional<Millis> lease_end;
  std::optional<std::uint64_t> token;
  std::visit(
      [&](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, Granted>) {
          token = c.hold.token;
          longest_delay_ = std::max(longest_delay_, c.hold.lock_delay_ms);
          if (c.hold.lease_expires_at == kNever) {
            unbounded_.insert(c.hold.token);
            need.wait_for_sync = true;
          } else {
            lease_end = c.hold.lease_expires_at;
          }
        } else if constexpr (std::is_same_v<T, GroupGranted>) {
          // A group's holds share one lease (never unbounded); its last token is the largest.
          token = c.holds.back().token;
          lease_end = c.holds.back().lease_expires_at;
        } else if constexpr (std::is_same_v<T, Renewed>) {
          if (c.lease_expires_at == kNever) {
            unbounded_.insert(c.token);
            need.wait_for_sync = true;
          } else {
            // Lost, a hold made bounded again would come back without an end.
            if (unbounded_.erase(c.token) > 0) need.wait_for_sync = true;
            lease_end = c.lease_expires_at;
          }
        } else if constexpr (std::is_same_v<T, Released>) {
          if (unbounded_.erase(c.token) > 0) need.wait_for_sync = true;
        } else if constexpr (std::is_same_v<T, RuleSetPut> || std::is_same_v<T, RuleSetDeleted> ||
                             std::is_same_v<T, ValueEdit>) {
          // No lease bounds what losing these would do: a counter handed out as a fencing
          // token could be handed out again.
          need.wait_for_sync = true;
        } else {
          static_assert(std::is_same_v<T, LeaseHorizon>, "every Change needs a horizon rule");
        }
      },
      change);
  // A hold's key may stay closed for its lock-delay after its lease: a Renewed record does not
  // say whose delay, so every lease end counts the longest one seen.
  if (lease_end) *lease_end += longest_delay_;
  const Millis lease = lease_end ? *lease_end - now : 0;
  longest_lease_ = std::max(longest_lease_, lease);

  const bool lease_near =
      lease_end && (*lease_end > asked_.until - options_.margin_ms || lease > asked_.max_lease);
  const bool tokens_near =
      token &&
      *token > asked_.tokens_through - std::min(asked_.tokens_through, options_.token_block / 2);
  if (lease_near || tokens_near) {
    LeaseHorizon next = asked_;
    next.until = std::max(asked_.until, now + longest_lease_ + options_.slack_ms);
    if (tokens_near)
      next.tokens_through = std::max(asked_.tokens_through, *token + options_.token_block);
    next.written_at = now;
    next.clean = false;
    next.max_lease = max_lease_at(now);
    need.record = next;
  }
  if (lease_end && (*lease_end > durable_.until || lease > durable_.max_lease))
    need.wait_for_sync = true;
  if (token && *token > durable_.tokens_through) need.wait_for_sync = true;
  return need;
}

void HorizonKeeper::appended(const LeaseHorizon& record, std::uint64_t sequence) {
  asked_ = record;
  in_flight_.emplace_back(sequence, record);
}

LeaseHorizon HorizonKeeper::restated(Millis now) const {
  LeaseHorizon r = asked_;
  r.written_at = now;
  r.clean = false;
  r.max_lease = std::max(asked_.max_lease, max_lease_at(now));
  return r;
}

LeaseHorizon HorizonKeeper::closing(Millis now) const {
  return LeaseHorizon{std::max(quarantine_until_, now), asked_.tokens_through, now, true,
                      max_lease_at(now)};
}

Millis HorizonKeeper::max_lease_at(Millis now) const {
  return std::max(longest_lease_, quarantine_until_ - now);
}

void HorizonKeeper::catch_up(std::uint64_t synced) {
  while (!in_flight_.empty() && in_flight_.front().first <= synced) {
    durable_ = in_flight_.front().second;
    in_flight_.pop_front();
  }
}

}  // namespace holdfast::wal
