// The lock operations of Client::Impl: build the RESP command, send it through the pool,
// turn the reply into a value (replies.cc) or an exception (error_map.cc).
//
// Acquire flow (Client::acquire and every with_lock):
//   1. Validate what the local queue itself needs (TTL > 0, timeout >= 0).
//   2. Wait for this key's turn on the local queue until the caller's deadline.
//   3. LOCK.ACQUIRE with TIMEOUT = the time left (0 when none is left: one attempt), on a
//      connection whose reply deadline is that time plus ClientOptions::acquire_margin.
//   4. A timeout at either stage is LockTimeoutError carrying the caller's timeout.
// Shared and semaphore acquires skip steps 2 and the in-flight count: several callers of this
// process may hold such a key together, so they wait only in the server's queue. So do
// multi-key acquires (LOCK.ACQUIREALL / LOCK.TRYALL): the server joins all their queues in one
// step, which cannot deadlock, whereas taking several local turns one by one could.
#include <algorithm>

#include "client/client_impl.h"
#include "client/error_map.h"
#include "client/replies.h"

namespace holdfast::inline v0 {

using client_internal::Reply;
using SteadyClock = std::chrono::steady_clock;

namespace {

// The server caps TTLs and timeouts at 24 h; the local queue's deadline uses the same cap so
// that adding it to now() cannot overflow.
constexpr milliseconds kMaxWait{86'400'000};

std::string ms_text(milliseconds ms) { return std::to_string(ms.count()); }

void validate_ttl(milliseconds ttl) {
  if (ttl.count() <= 0)
    throw InvalidArgumentError(
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT TTL must be a positive number of milliseconds ttlMs=" + ms_text(ttl),
        {{"ttlMs", ms_text(ttl)}});
}

void validate_timeout(milliseconds timeout) {
  if (timeout.count() < 0)
    throw InvalidArgumentError(
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT timeout must not be negative timeoutMs=" + ms_text(timeout),
        {{"timeoutMs", ms_text(timeout)}});
}

[[noreturn]] void throw_timeout(std::string_view key, milliseconds timeout,
                                std::string_view where) {
  throw LockTimeoutError(std::string(key), timeout,
                         "LOCK_TIMEOUT no grant within the timeout" + std::string(where) +
                             " key=" + std::string(key) + " timeoutMs=" + ms_text(timeout));
}

void add_hold_options(std::vector<std::string>& args, const std::optional<std::string>& owner,
                      bool session) {
  if (owner) {
    args.push_back("OWNER");
    args.push_back(*owner);
  }
  if (session) args.push_back("SESSION");
}

void add_mode(std::vector<std::string>& args, const AcquireMode& mode) {
  switch (mode.mode()) {
    case LockMode::kExclusive:
      return;
    case LockMode::kShared:
      args.insert(args.end(), {"MODE", "SHARED"});
      return;
    case LockMode::kSemaphore:
      args.insert(args.end(),
                  {"PERMITS", std::to_string(mode.permits()), "TAKE", std::to_string(mode.take())});
      return;
  }
}

void add_lock_delay(std::vector<std::string>& args, const std::optional<milliseconds>& delay) {
  if (delay) args.insert(args.end(), {"LOCKDELAY", ms_text(*delay)});
}

// LOCK.ACQUIREALL / LOCK.TRYALL: the request's options come first, then a block per key.
void add_key_blocks(std::vector<std::string>& args, const std::vector<KeyRequest>& keys) {
  for (const KeyRequest& k : keys) {
    args.push_back("KEY");
    args.push_back(k.key);
    add_mode(args, k.mode);
  }
}

bool queues_locally(const AcquireMode& mode) { return mode.mode() == LockMode::kExclusive; }

}  // namespace

Client::Impl::Impl(std::vector<client_internal::ServerAddress> addresses, const ClientOptions& opts)
    : options(opts), pool(std::move(addresses), opts) {}

Reply Client::Impl::call(const std::vector<std::string>& args, milliseconds reply_timeout,
                         bool pin_on_success) {
  Reply reply = pool.call(args, reply_timeout, pin_on_success);
  if (reply.is_error()) client_internal::throw_server_error(reply.str);
  return reply;
}

SteadyClock::time_point Client::Impl::surely_held_until(SteadyClock::time_point sent,
                                                        SteadyClock::time_point received,
                                                        milliseconds ttl) {
  auto uncertainty = std::min<SteadyClock::duration>(received - sent, ttl / 10);
  return received + std::min(ttl, kMaxWait) - uncertainty;
}

Client::Impl::Grant Client::Impl::acquire(std::string_view key, const AcquireOptions& o) {
  validate_ttl(o.ttl);
  validate_timeout(o.timeout);
  const std::string k(key);
  const auto deadline = SteadyClock::now() + std::min(o.timeout, kMaxWait);
  using Turn = std::optional<client_internal::KeyQueue::Turn>;
  const bool local = queues_locally(o.mode);
  Turn turn = local ? queue.wait_turn(k, deadline) : Turn();
  if (local && !turn) throw_timeout(key, o.timeout, " (behind other callers of this process)");

  auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
  left = std::max(left, milliseconds(0));
  std::vector<std::string> args = {"LOCK.ACQUIRE", k,         "TTL",
                                   ms_text(o.ttl), "TIMEOUT", ms_text(left)};
  add_hold_options(args, o.owner, o.session);
  add_mode(args, o.mode);
  add_lock_delay(args, o.lock_delay);
  std::optional<client_internal::KeyQueue::InFlight> in_flight;
  if (turn) in_flight.emplace(queue.in_flight(k));
  const auto sent = SteadyClock::now();
  Reply reply;
  try {
    reply = call(args, left + options.acquire_margin, o.session);
  } catch (const LockTimeoutError&) {
    throw_timeout(key, o.timeout, "");
  }
  const auto received = SteadyClock::now();
  LockHandle hold = client_internal::to_lock_handle(reply);
  auto granted_ttl =
      std::chrono::duration_cast<milliseconds>(hold.lease_expires_at - hold.acquired_at);
  return Grant{std::move(turn), std::move(hold), surely_held_until(sent, received, granted_ttl)};
}

std::optional<LockHandle> Client::Impl::try_acquire(std::string_view key,
                                                    const TryAcquireOptions& o) {
  validate_ttl(o.ttl);
  const std::string k(key);
  // Another caller of this process is acquiring or holding the key (with_lock): contention.
  using Turn = std::optional<client_internal::KeyQueue::Turn>;
  const bool local = queues_locally(o.mode);
  Turn turn = local ? queue.try_turn(k) : Turn();
  if (local && !turn) return std::nullopt;
  std::vector<std::string> args = {"LOCK.TRY", k, "TTL", ms_text(o.ttl)};
  add_hold_options(args, o.owner, o.session);
  add_mode(args, o.mode);
  add_lock_delay(args, o.lock_delay);
  std::optional<client_internal::KeyQueue::InFlight> in_flight;
  if (turn) in_flight.emplace(queue.in_flight(k));
  Reply reply = call(args, options.io_timeout, o.session);
  if (reply.is_null()) return std::nullopt;
  return client_internal::to_lock_handle(reply);
}

Client::Impl::GroupGrant Client::Impl::acquire_all(const std::vector<KeyRequest>& keys,
                                                   const AcquireAllOptions& o) {
  validate_ttl(o.ttl);
  validate_timeout(o.timeout);
  const milliseconds timeout = std::min(o.timeout, kMaxWait);
  std::vector<std::string> args = {"LOCK.ACQUIREALL", "TTL", ms_text(o.ttl), "TIMEOUT",
                                   ms_text(timeout)};
  add_hold_options(args, o.owner, o.session);
  add_key_blocks(args, keys);
  const auto sent = SteadyClock::now();
  Reply reply = call(args, timeout + options.acquire_margin, o.session);
  const auto received = SteadyClock::now();
  LockGroup group = client_internal::to_lock_group(reply);
  if (group.holds.empty()) throw ProtocolError("LOCK.ACQUIREALL answered a group without holds");
  auto granted_ttl = std::chrono::duration_cast<milliseconds>(group.lease_expires_at -
                                                              group.holds.front().acquired_at);
  return GroupGrant{std::move(group), surely_held_until(sent, received, granted_ttl)};
}

std::optional<LockGroup> Client::Impl::try_acquire_all(const std::vector<KeyRequest>& keys,
                                                       const TryAcquireAllOptions& o) {
  validate_ttl(o.ttl);
  std::vector<std::string> args = {"LOCK.TRYALL", "TTL", ms_text(o.ttl)};
  add_hold_options(args, o.owner, o.session);
  add_key_blocks(args, keys);
  Reply reply = call(args, options.io_timeout, o.session);
  if (reply.is_null()) return std::nullopt;
  return client_internal::to_lock_group(reply);
}

RenewResult Client::Impl::renew(std::string_view key, std::string_view handle, milliseconds ttl) {
  return client_internal::to_renew_result(
      call({"LOCK.RENEW", std::string(key), std::string(handle), "TTL", ms_text(ttl)}));
}

ReleaseResult Client::Impl::release(std::string_view key, std::string_view handle) {
  return client_internal::to_release_result(
      call({"LOCK.RELEASE", std::string(key), std::string(handle)}));
}

LockStatus Client::Impl::status(std::string_view key) {
  return client_internal::to_status(call({"LOCK.STATUS", std::string(key)}));
}

ListPage Client::Impl::list(const ListOptions& o) {
  std::vector<std::string> args = {"LOCK.LIST"};
  if (!o.match.empty()) {
    args.push_back("MATCH");
    args.push_back(o.match);
  }
  args.push_back("CURSOR");
  args.push_back(o.cursor.empty() ? "0" : o.cursor);
  args.push_back("COUNT");
  args.push_back(std::to_string(o.count));
  return client_internal::to_list_page(call(args));
}

Assignment Client::Impl::assign(std::string_view key, std::optional<std::string_view> holder_id,
                                const AssignOptions& o) {
  // Without a holder id the options follow the key at once: the server tells them apart by
  // their count (docs/resp.md).
  std::vector<std::string> args = {"LOCK.ASSIGN", std::string(key)};
  if (holder_id) args.emplace_back(*holder_id);
  milliseconds reply_timeout = options.io_timeout;
  if (o.ttl) {
    args.push_back("TTL");
    args.push_back(ms_text(*o.ttl));
  }
  if (o.timeout) {
    args.push_back("TIMEOUT");
    args.push_back(ms_text(*o.timeout));
    reply_timeout = std::min(*o.timeout, kMaxWait) + options.acquire_margin;
  }
  add_lock_delay(args, o.lock_delay);
  return client_internal::to_assignment(call(args, reply_timeout));
}

TransferResult Client::Impl::transfer(std::string_view key, std::string_view to_id,
                                      std::optional<std::string_view> from_id) {
  std::vector<std::string> args = {"LOCK.TRANSFER", std::string(key), std::string(to_id)};
  if (from_id) {
    args.emplace_back("FROM");
    args.emplace_back(*from_id);
  }
  return client_internal::to_transfer_result(call(args));
}

bool Client::Impl::unassign(std::string_view key, std::optional<std::string_view> holder_id) {
  std::vector<std::string> args = {"LOCK.UNASSIGN", std::string(key)};
  if (holder_id) args.emplace_back(*holder_id);
  const Reply reply = call(args);
  const Reply* released = reply.field("released");
  return released != nullptr && released->integer != 0;
}

HolderInfo Client::Impl::holder(std::string_view key) {
  return client_internal::to_holder_info(call({"LOCK.HOLDER", std::string(key)}));
}

HolderInfo Client::Impl::check(std::string_view key, std::optional<std::string_view> holder_id) {
  std::vector<std::string> args = {"LOCK.CHECK", std::string(key)};
  if (holder_id) args.emplace_back(*holder_id);
  return client_internal::to_holder_info(call(args));
}

void Client::Impl::ping() { call({"PING"}); }

ServerInfo Client::Impl::server_info() {
  // HELLO again on an open connection answers as the handshake's did (the protocol stays 3).
  const Reply reply = call({"HELLO", "3"});
  auto text = [&](std::string_view name) {
    const Reply* f = reply.field(name);
    return f != nullptr ? f->str : std::string();
  };
  return ServerInfo{.version = text("version"), .mode = text("mode")};
}

}  // namespace holdfast::inline v0
