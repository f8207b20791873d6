// The words of a lock request, named once for every layer and as on the wire: a semaphore key
// has `permits` (PERMITS), and each grant takes `take` of them (TAKE). The front ends parse a
// request into these, the policy checks them, and a backend runs them; a layer that needs to
// know more (the lock table: who asks, on which connection) extends them rather than copying
// them field by field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/hold.h"

namespace holdfast {

// The most permits a semaphore may have.
inline constexpr std::uint32_t kMaxPermits = 1'000'000;

// One key of a request and how its grant shares the key (docs/lock-kinds.md). Views, valid for
// the duration of the issuing call only.
struct KeyRequest {
  std::string_view key;
  LockMode mode = LockMode::kExclusive;
  // kSemaphore: the key's permits (1..kMaxPermits), and how many of them this grant takes
  // (1..permits). Other modes leave them as they are.
  std::uint32_t permits = 0;
  std::uint32_t take = 1;
};

// An acquire (or a try: timeout_ms is then unused) of one key.
struct AcquireArgs : KeyRequest {
  Millis ttl_ms = 0;
  Millis timeout_ms = 0;  // how long to wait in the queue (0: one attempt)
  std::optional<std::string_view> owner;
  bool session_scoped = false;
  // Lock-delay (docs/lock-kinds.md): 0..kMaxLockDelayMs. None: the rule set's default.
  std::optional<Millis> lock_delay_ms;
};

// Several keys at once, all or nothing (docs/lock-kinds.md, "Several keys at once"): each key
// with its own mode; the lease, the wait, the owner and the scope are the request's.
struct AcquireAllArgs {
  std::vector<KeyRequest> keys;
  Millis ttl_ms = 0;
  Millis timeout_ms = 0;
  std::optional<std::string_view> owner;
  bool session_scoped = false;

  // The acquire of keys[i] alone, with this request's lease, wait, owner and scope: what the
  // rules and the checks see of each key.
  AcquireArgs one(std::size_t i) const {
    AcquireArgs a;
    static_cast<KeyRequest&>(a) = keys[i];
    a.ttl_ms = ttl_ms;
    a.timeout_ms = timeout_ms;
    a.owner = owner;
    a.session_scoped = session_scoped;
    return a;
  }
};

// Identity-aware holds. A holder id left out stands for the caller's own identity: its userId
// when credentials are configured (docs/auth.md, "Holder ids"). The policy resolves it before
// the rules see the call, so a backend always gets it set.
struct AssignArgs {
  std::string_view key;
  std::optional<std::string_view> holder_id;
  std::optional<Millis> ttl_ms;         // none: never expires
  std::optional<Millis> timeout_ms;     // none: one attempt answering LOCK_HELD
  std::optional<Millis> lock_delay_ms;  // as AcquireArgs::lock_delay_ms
};

// A request kept beyond the call that issued it (the rate gate, a node's database thread, a
// deferred call): it owns its strings, and args() gives the request again with views of them.
// The one place a request is copied.
class AcquireCopy {
 public:
  explicit AcquireCopy(const AcquireArgs& args)
      : fields_(args), key_(args.key), owner_(own(args.owner)) {}
  AcquireArgs args() const {
    AcquireArgs a = fields_;
    a.key = key_;
    a.owner = view(owner_);
    return a;
  }

 private:
  static std::optional<std::string> own(std::optional<std::string_view> v) {
    return v ? std::optional<std::string>(*v) : std::nullopt;
  }
  static std::optional<std::string_view> view(const std::optional<std::string>& v) {
    return v ? std::optional<std::string_view>(*v) : std::nullopt;
  }
  friend class AcquireAllCopy;
  friend class AssignCopy;

  AcquireArgs fields_;  // its views point at the issuer's buffers: args() replaces them
  std::string key_;
  std::optional<std::string> owner_;
};

class AcquireAllCopy {
 public:
  explicit AcquireAllCopy(const AcquireAllArgs& args)
      : fields_(args), owner_(AcquireCopy::own(args.owner)) {
    keys_.reserve(args.keys.size());
    for (const KeyRequest& k : args.keys) keys_.emplace_back(k.key);
  }
  AcquireAllArgs args() const {
    AcquireAllArgs a = fields_;
    a.owner = AcquireCopy::view(owner_);
    for (std::size_t i = 0; i < keys_.size(); ++i) a.keys[i].key = keys_[i];
    return a;
  }

 private:
  AcquireAllArgs fields_;
  std::vector<std::string> keys_;
  std::optional<std::string> owner_;
};

class AssignCopy {
 public:
  explicit AssignCopy(const AssignArgs& args)
      : fields_(args), key_(args.key), holder_id_(AcquireCopy::own(args.holder_id)) {}
  AssignArgs args() const {
    AssignArgs a = fields_;
    a.key = key_;
    a.holder_id = AcquireCopy::view(holder_id_);
    return a;
  }

 private:
  AssignArgs fields_;
  std::string key_;
  std::optional<std::string> holder_id_;
};

}  // namespace holdfast
