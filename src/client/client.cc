// The public Client: parses the URL, owns the Impl, forwards each call (locks_api.cc).
#include "holdfast/client.h"

#include "client/client_impl.h"

namespace holdfast::inline v0 {

namespace {

// list_all() pages by the server's largest page: every page scans the whole table on an
// embedded server, so a page of 100 made listing 300 000 holds take 3 000 scans (51 s).
constexpr std::size_t kListAllPage = 10000;

std::vector<client_internal::ServerAddress> addresses_with_credentials(
    std::string_view url, const ClientOptions& options) {
  auto addresses = client_internal::parse_server_urls(url);
  // TLS settings for a server that would not get them: a plain connection the caller did not
  // mean to make.
  for (const auto& [name, value] : {std::pair{"tls_ca", &options.tls_ca},
                                    {"tls_cert", &options.tls_cert},
                                    {"tls_key", &options.tls_key}}) {
    if (!value->empty() && !addresses.front().tls)
      throw InvalidArgumentError("INVALID_ARGUMENT",
                                 std::string(name) +
                                     " is set but the server URL is not rediss://: use "
                                     "rediss://host:port for TLS");
  }
  for (auto& address : addresses) {
    if (!options.token.empty()) address.token = options.token;
    if (!options.user.empty()) address.user = options.user;
  }
  return addresses;
}

}  // namespace

Client::Client(std::string_view url, ClientOptions options)
    : impl_(std::make_unique<Impl>(addresses_with_credentials(url, options), options)) {}

Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

std::string Client::server() const { return impl_->pool.address().display(); }

void Client::ping() { impl_->ping(); }

ServerInfo Client::server_info() { return impl_->server_info(); }

LockHandle Client::acquire(std::string_view key, const AcquireOptions& options) {
  // The turn on the local queue ends here: a handle-based hold may outlive any scope.
  return impl_->acquire(key, options).hold;
}

std::optional<LockHandle> Client::try_acquire(std::string_view key,
                                              const TryAcquireOptions& options) {
  return impl_->try_acquire(key, options);
}

LockGroup Client::acquire_all(const std::vector<KeyRequest>& keys,
                              const AcquireAllOptions& options) {
  return impl_->acquire_all(keys, options).group;
}

std::optional<LockGroup> Client::try_acquire_all(const std::vector<KeyRequest>& keys,
                                                 const TryAcquireAllOptions& options) {
  return impl_->try_acquire_all(keys, options);
}

RenewResult Client::renew(const LockHandle& hold, milliseconds ttl) {
  return impl_->renew(hold.key, hold.handle, ttl);
}

RenewResult Client::renew(std::string_view key, std::string_view handle, milliseconds ttl) {
  return impl_->renew(key, handle, ttl);
}

namespace {

// The server renews and releases a whole group through any one of its keys.
const LockHandle& any_hold_of(const LockGroup& group) {
  if (group.holds.empty())
    throw InvalidArgumentError("INVALID_ARGUMENT", "INVALID_ARGUMENT the group has no holds");
  return group.holds.front();
}

}  // namespace

RenewResult Client::renew(const LockGroup& group, milliseconds ttl) {
  return impl_->renew(any_hold_of(group).key, group.handle, ttl);
}

ReleaseResult Client::release(const LockGroup& group) {
  return impl_->release(any_hold_of(group).key, group.handle);
}

ReleaseResult Client::release(const LockHandle& hold) {
  return impl_->release(hold.key, hold.handle);
}

ReleaseResult Client::release(std::string_view key, std::string_view handle) {
  return impl_->release(key, handle);
}

LockStatus Client::status(std::string_view key) { return impl_->status(key); }

ListPage Client::list(const ListOptions& options) { return impl_->list(options); }

std::vector<HoldInfo> Client::list_all(std::string_view match) {
  std::vector<HoldInfo> all;
  ListOptions options;
  options.match = std::string(match);
  options.count = kListAllPage;
  for (;;) {
    ListPage page = impl_->list(options);
    for (auto& h : page.holds) all.push_back(std::move(h));
    // A cursor that does not move would loop forever; the server never sends one, but a
    // client should not hang on a server bug.
    if (page.last() || page.next_cursor == options.cursor) break;
    options.cursor = page.next_cursor;
  }
  return all;
}

Assignment Client::assign(std::string_view key, std::string_view holder_id,
                          const AssignOptions& options) {
  return impl_->assign(key, holder_id, options);
}

Assignment Client::assign(std::string_view key, const AssignOptions& options) {
  return impl_->assign(key, std::nullopt, options);
}

TransferResult Client::transfer(std::string_view key, std::string_view to_id,
                                std::optional<std::string_view> from_id) {
  return impl_->transfer(key, to_id, from_id);
}

bool Client::unassign(std::string_view key, std::optional<std::string_view> holder_id) {
  return impl_->unassign(key, holder_id);
}

HolderInfo Client::holder(std::string_view key) { return impl_->holder(key); }

HolderInfo Client::verify_holder(std::string_view key, std::optional<std::string_view> holder_id) {
  return impl_->check(key, holder_id);
}

bool Client::check_holder(std::string_view key, std::string_view caller_id) {
  HolderInfo h = impl_->holder(key);
  return !h.holder || *h.holder == caller_id;
}

bool Client::push_rule_set(std::string_view toml) {
  const auto reply = impl_->call({"RULES.SET", std::string(toml)});
  const auto* replaced = reply.field("replaced");
  return replaced != nullptr && replaced->integer != 0;
}

std::optional<RuleSetInfo> Client::rule_set() {
  const auto reply = impl_->call({"RULES.GET"});
  if (reply.is_null()) return std::nullopt;
  const auto* name = reply.field("name");
  const auto* toml = reply.field("toml");
  if (name == nullptr || toml == nullptr)
    throw ProtocolError("RULES.GET answered " + reply.debug());
  return RuleSetInfo{name->str, toml->str};
}

void Client::delete_rule_set(std::string_view name) {
  impl_->call({"RULES.DELETE", std::string(name)});
}

ClientStats Client::stats() const {
  auto pool = impl_->pool.stats();
  ClientStats s;
  s.open_connections = pool.open;
  s.idle_connections = pool.idle;
  s.connections_opened = pool.opened;
  s.max_in_flight_per_key = impl_->queue.max_in_flight_per_key();
  s.local_waiters = impl_->queue.waiting();
  s.renewals = impl_->renewals.load();
  s.renewing_scopes = impl_->renewing_scopes.load();
  return s;
}

}  // namespace holdfast::inline v0
