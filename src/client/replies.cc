// Reply trees to value types (see replies.h).
#include "client/replies.h"

#include <charconv>

#include "holdfast/errors.h"

namespace holdfast::inline v0 {

const char* to_string(Scope scope) noexcept {
  switch (scope) {
    case Scope::kLease:
      return "lease";
    case Scope::kSession:
      return "session";
  }
  return "?";
}

const char* to_string(HoldKind kind) noexcept {
  switch (kind) {
    case HoldKind::kHandle:
      return "handle";
    case HoldKind::kAssigned:
      return "assigned";
  }
  return "?";
}

const char* to_string(LockMode mode) noexcept {
  switch (mode) {
    case LockMode::kExclusive:
      return "exclusive";
    case LockMode::kShared:
      return "shared";
    case LockMode::kSemaphore:
      return "semaphore";
  }
  return "?";
}

}  // namespace holdfast::inline v0

namespace holdfast::inline v0::client_internal {
namespace {

[[noreturn]] void bad_reply(const Reply& reply, std::string_view what) {
  throw ProtocolError("unexpected reply from the server (" + std::string(what) +
                      "): " + reply.debug().substr(0, 200));
}

const Reply& need(const Reply& reply, std::string_view name) {
  const Reply* f = reply.field(name);
  if (f == nullptr) bad_reply(reply, "no field '" + std::string(name) + "'");
  return *f;
}

std::string text(const Reply& reply, std::string_view name) {
  const Reply& f = need(reply, name);
  if (f.type != Reply::Type::kBulk && f.type != Reply::Type::kSimple)
    bad_reply(reply, "field '" + std::string(name) + "' is not a string");
  return f.str;
}

std::optional<std::string> optional_text(const Reply& reply, std::string_view name) {
  const Reply* f = reply.field(name);
  if (f == nullptr || f->is_null()) return std::nullopt;
  if (f->type != Reply::Type::kBulk && f->type != Reply::Type::kSimple)
    bad_reply(reply, "field '" + std::string(name) + "' is not a string");
  return f->str;
}

std::int64_t integer_of(const Reply& reply, const Reply& f, std::string_view name) {
  if (f.type == Reply::Type::kInteger || f.type == Reply::Type::kBool) return f.integer;
  if (f.type == Reply::Type::kBulk) {  // tolerate numbers sent as strings
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(f.str.data(), f.str.data() + f.str.size(), v);
    if (ec == std::errc() && end == f.str.data() + f.str.size()) return v;
  }
  bad_reply(reply, "field '" + std::string(name) + "' is not an integer");
}

std::int64_t integer(const Reply& reply, std::string_view name) {
  return integer_of(reply, need(reply, name), name);
}

std::optional<std::int64_t> optional_integer(const Reply& reply, std::string_view name) {
  const Reply* f = reply.field(name);
  if (f == nullptr || f->is_null()) return std::nullopt;
  return integer_of(reply, *f, name);
}

TimePoint at(std::int64_t ms) { return TimePoint(std::chrono::milliseconds(ms)); }

std::optional<TimePoint> optional_time(const Reply& reply, std::string_view name) {
  auto ms = optional_integer(reply, name);
  if (!ms) return std::nullopt;
  return at(*ms);
}

Scope scope_of(const Reply& reply) {
  auto s = optional_text(reply, "scope");
  return s && *s == "session" ? Scope::kSession : Scope::kLease;
}

HoldKind kind_of(const Reply& reply) {
  auto k = optional_text(reply, "kind");
  return k && *k == "assigned" ? HoldKind::kAssigned : HoldKind::kHandle;
}

// A reply without `mode` is an exclusive hold (its fields are as they always were).
LockMode mode_of(const Reply& reply) {
  auto m = optional_text(reply, "mode");
  if (!m || *m == "exclusive") return LockMode::kExclusive;
  if (*m == "shared") return LockMode::kShared;
  if (*m == "semaphore") return LockMode::kSemaphore;
  bad_reply(reply, "unknown mode '" + *m + "'");
}

std::uint32_t count_of(const Reply& reply, std::string_view name) {
  auto n = optional_integer(reply, name).value_or(0);
  if (n < 0 || n > 0xFFFFFFFF) bad_reply(reply, "field '" + std::string(name) + "' out of range");
  return static_cast<std::uint32_t>(n);
}

// mode, and for a semaphore hold the key's permits and the hold's take, into a LockHandle or a
// HoldInfo.
template <typename Hold>
void read_mode(const Reply& reply, Hold& h) {
  h.mode = mode_of(reply);
  if (h.mode != LockMode::kSemaphore) return;
  h.permits = count_of(reply, "permits");
  h.take = count_of(reply, "take");
}

// lockDelayMs: there only on a hold that has a lock-delay.
std::chrono::milliseconds lock_delay_of(const Reply& reply) {
  auto ms = optional_integer(reply, "lockDelayMs").value_or(0);
  if (ms < 0) bad_reply(reply, "field 'lockDelayMs' is negative");
  return std::chrono::milliseconds(ms);
}

void expect_fields(const Reply& reply) {
  if (reply.type != Reply::Type::kMap && reply.type != Reply::Type::kArray)
    bad_reply(reply, "not a map");
}

}  // namespace

LockHandle to_lock_handle(const Reply& reply) {
  expect_fields(reply);
  LockHandle h;
  h.key = text(reply, "key");
  h.handle = text(reply, "handle");
  h.token = static_cast<std::uint64_t>(integer(reply, "token"));
  h.held_by = text(reply, "heldBy");
  h.owner = optional_text(reply, "owner");
  h.acquired_at = at(integer(reply, "acquiredAt"));
  h.lease_expires_at = at(integer(reply, "leaseExpiresAt"));
  h.scope = scope_of(reply);
  read_mode(reply, h);
  h.lock_delay = lock_delay_of(reply);
  return h;
}

LockGroup to_lock_group(const Reply& reply) {
  expect_fields(reply);
  LockGroup g;
  g.handle = text(reply, "handle");
  g.lease_expires_at = at(integer(reply, "leaseExpiresAt"));
  const Reply& holds = need(reply, "holds");
  if (holds.type != Reply::Type::kArray) bad_reply(reply, "field 'holds' is not a list");
  for (const Reply& item : holds.items) g.holds.push_back(to_lock_handle(item));
  return g;
}

HoldInfo to_hold_info(const Reply& reply) {
  expect_fields(reply);
  HoldInfo h;
  h.key = text(reply, "key");
  h.token = static_cast<std::uint64_t>(integer(reply, "token"));
  h.held_by = text(reply, "heldBy");
  h.owner = optional_text(reply, "owner");
  h.acquired_at = at(integer(reply, "acquiredAt"));
  h.lease_expires_at = optional_time(reply, "leaseExpiresAt");
  h.scope = scope_of(reply);
  h.kind = kind_of(reply);
  h.holder = optional_text(reply, "holder");
  read_mode(reply, h);
  h.lock_delay = lock_delay_of(reply);
  return h;
}

LockStatus to_status(const Reply& reply) {
  expect_fields(reply);
  LockStatus s;
  s.key = text(reply, "key");
  s.waiters = optional_integer(reply, "waiters").value_or(0);
  s.lock_delay_until = optional_time(reply, "lockDelayUntil");
  if (integer(reply, "held") == 0) return s;
  // The status map carries the newest hold's fields; for a shared or semaphore key `mode` is
  // the key's and `permits` its permits, and `holders` lists every hold.
  s.hold = to_hold_info(reply);
  s.mode = mode_of(reply);
  if (s.mode == LockMode::kExclusive) {
    s.holders.push_back(*s.hold);
    return s;
  }
  s.hold->mode = s.mode;
  s.hold->permits = 0;
  s.hold->take = 0;
  const Reply& holders = need(reply, "holders");
  if (holders.type != Reply::Type::kArray) bad_reply(reply, "field 'holders' is not a list");
  for (const Reply& item : holders.items) s.holders.push_back(to_hold_info(item));
  if (!s.holders.empty()) s.hold = s.holders.back();
  if (s.mode == LockMode::kSemaphore) {
    s.permits = count_of(reply, "permits");
    s.free_permits = count_of(reply, "freePermits");
  }
  return s;
}

ListPage to_list_page(const Reply& reply) {
  if (reply.type != Reply::Type::kArray || reply.items.size() != 2 ||
      reply.items[1].type != Reply::Type::kArray)
    bad_reply(reply, "LOCK.LIST answers [cursor, [holds]]");
  ListPage page;
  page.next_cursor = reply.items[0].str;
  for (const Reply& item : reply.items[1].items) page.holds.push_back(to_hold_info(item));
  return page;
}

RenewResult to_renew_result(const Reply& reply) {
  expect_fields(reply);
  RenewResult r;
  r.renewed = integer(reply, "renewed") != 0;
  if (r.renewed) {
    r.lease_expires_at = optional_time(reply, "leaseExpiresAt");
  } else {
    r.reason = optional_text(reply, "reason").value_or("lease_lost");
  }
  return r;
}

ReleaseResult to_release_result(const Reply& reply) {
  expect_fields(reply);
  ReleaseResult r;
  r.released = integer(reply, "released") != 0;
  if (!r.released) r.reason = optional_text(reply, "reason").value_or("not_holder");
  return r;
}

Assignment to_assignment(const Reply& reply) {
  expect_fields(reply);
  Assignment a;
  a.key = text(reply, "key");
  a.holder = text(reply, "holder");
  a.token = static_cast<std::uint64_t>(integer(reply, "token"));
  a.held_by = optional_text(reply, "heldBy").value_or("");
  a.acquired_at = at(integer(reply, "acquiredAt"));
  a.lease_expires_at = optional_time(reply, "leaseExpiresAt");
  a.lock_delay = lock_delay_of(reply);
  return a;
}

TransferResult to_transfer_result(const Reply& reply) {
  expect_fields(reply);
  return TransferResult{text(reply, "holder"), static_cast<std::uint64_t>(integer(reply, "token"))};
}

HolderInfo to_holder_info(const Reply& reply) {
  expect_fields(reply);
  HolderInfo h;
  h.key = text(reply, "key");
  h.held = optional_integer(reply, "held").value_or(0) != 0;
  h.holder = optional_text(reply, "holder");
  h.token = static_cast<std::uint64_t>(optional_integer(reply, "token").value_or(0));
  h.acquired_at = optional_time(reply, "acquiredAt");
  h.lease_expires_at = optional_time(reply, "leaseExpiresAt");
  return h;
}

}  // namespace holdfast::inline v0::client_internal
