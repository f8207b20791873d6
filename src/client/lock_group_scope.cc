// LockGroupScope and LockGroupContext: with_locks (include/holdfast/with_locks.h). The monitor,
// the lost flag and the release are the ones a LockScope has (scope_state.h).
#include "client/scope_state.h"
#include "holdfast/with_locks.h"

namespace holdfast::inline v0 {

namespace {

std::unique_ptr<detail::ScopeState> begin_group(Client::Impl* impl,
                                                const std::vector<KeyRequest>& keys,
                                                const WithLocksOptions& o) {
  detail::validate_renewal(o.renew, o.renew_fraction);
  AcquireAllOptions acquire{
      .ttl = o.ttl, .timeout = o.timeout, .owner = o.owner, .session = o.session};
  auto state = std::make_unique<detail::ScopeState>(
      impl, detail::ScopeState::Renewal{o.ttl, o.renew, o.renew_fraction},
      impl->acquire_all(keys, acquire), o.on_lost);
  state->start();
  return state;
}

}  // namespace

const std::string& LockGroupContext::handle() const noexcept { return state_->hold.handle; }

std::uint64_t LockGroupContext::token(std::string_view key) const {
  // Tokens never change while the scope lives; only lease ends move (under `mu`).
  if (const LockHandle* h = state_->group->find(key)) return h->token;
  throw InvalidArgumentError("INVALID_ARGUMENT",
                             "INVALID_ARGUMENT the group has no key key=" + std::string(key),
                             {{"key", std::string(key)}});
}

LockGroup LockGroupContext::group() const {
  std::lock_guard lock(state_->mu);
  return *state_->group;
}

bool LockGroupContext::lost() const { return state_->lost(); }

bool LockGroupContext::wait_lost(milliseconds timeout) const { return state_->wait_lost(timeout); }

LockGroupScope::LockGroupScope(Client& client, const std::vector<KeyRequest>& keys,
                               const WithLocksOptions& options)
    : state_(begin_group(client.impl_.get(), keys, options)), context_(state_.get()) {}

LockGroupScope::~LockGroupScope() {
  try {
    release();
  } catch (...) {
    // The group ends at its lease; a destructor has nowhere to report this.
  }
}

ReleaseResult LockGroupScope::release() { return state_->release(); }

}  // namespace holdfast::inline v0
