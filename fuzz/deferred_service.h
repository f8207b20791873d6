// DeferredService: a LockService whose calls all take effect later, in an order the fuzzer
// chooses, as on a node over PostgreSQL (whose calls run on other threads and come back when
// the database answers). Every call answers kWaiting and is queued with copies of its
// arguments; run(pick) hands one queued call to the real service (a Policy over an embedded
// backend), which finishes it when it decides: at once, after a queue, or after the log.
// end_session() finishes a session's queued call with UNAVAILABLE, as a node does for a
// connection that closed while its call waited. Inside atomically() calls run at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "service/lock_service.h"

namespace holdfast::fuzz {

class DeferredService final : public LockService {
 public:
  explicit DeferredService(LockService& inner) : inner_(inner) {}

  bool empty() const { return queued_.empty(); }
  // Runs the queued call at `pick` (modulo the queue's length); false when none is queued.
  bool run(std::size_t pick) {
    if (queued_.empty()) return false;
    const auto at = queued_.begin() + static_cast<std::ptrdiff_t>(pick % queued_.size());
    Queued call = std::move(*at);
    queued_.erase(at);
    (void)call.run(inner_, *call.done);
    return true;
  }

  Issued acquire(const Caller& caller, const AcquireArgs& args, Completion& done) override {
    return defer(caller, done, [caller, a = AcquireCopy(args)](LockService& s, Completion& d) {
      return s.acquire(caller, a.args(), d);
    });
  }
  Issued try_acquire(const Caller& caller, const AcquireArgs& args, Completion& done) override {
    return defer(caller, done, [caller, a = AcquireCopy(args)](LockService& s, Completion& d) {
      return s.try_acquire(caller, a.args(), d);
    });
  }
  Issued acquire_all(const Caller& caller, const AcquireAllArgs& args, Completion& done) override {
    return defer(caller, done, [caller, a = AcquireAllCopy(args)](LockService& s, Completion& d) {
      return s.acquire_all(caller, a.args(), d);
    });
  }
  Issued try_acquire_all(const Caller& caller, const AcquireAllArgs& args,
                         Completion& done) override {
    return defer(caller, done, [caller, a = AcquireAllCopy(args)](LockService& s, Completion& d) {
      return s.try_acquire_all(caller, a.args(), d);
    });
  }
  Issued renew(const Caller& caller, const RenewArgs& args, Completion& done) override {
    return defer(caller, done,
                 [caller, key = std::string(args.key), handle = std::string(args.handle),
                  ttl = args.ttl_ms](LockService& s, Completion& d) {
                   return s.renew(caller, RenewArgs{key, handle, ttl}, d);
                 });
  }
  Issued release(const Caller& caller, const ReleaseArgs& args, Completion& done) override {
    return defer(caller, done,
                 [caller, key = std::string(args.key), handle = std::string(args.handle)](
                     LockService& s, Completion& d) {
                   return s.release(caller, ReleaseArgs{key, handle}, d);
                 });
  }
  Issued status(const Caller& caller, std::string_view key, Completion& done) override {
    return defer(caller, done, [caller, key = std::string(key)](LockService& s, Completion& d) {
      return s.status(caller, key, d);
    });
  }
  Issued list(const Caller& caller, const ListArgs& args, Completion& done) override {
    return defer(caller, done,
                 [caller, match = std::string(args.match), cursor = std::string(args.cursor),
                  count = args.count](LockService& s, Completion& d) {
                   return s.list(caller, ListArgs{match, cursor, count}, d);
                 });
  }
  Issued assign(const Caller& caller, const AssignArgs& args, Completion& done) override {
    return defer(caller, done, [caller, a = AssignCopy(args)](LockService& s, Completion& d) {
      return s.assign(caller, a.args(), d);
    });
  }
  Issued transfer(const Caller& caller, const TransferArgs& args, Completion& done) override {
    return defer(caller, done,
                 [caller, key = std::string(args.key), to = std::string(args.to_id),
                  from = copy(args.from_id)](LockService& s, Completion& d) {
                   return s.transfer(caller, TransferArgs{key, to, view(from)}, d);
                 });
  }
  Issued unassign(const Caller& caller, const UnassignArgs& args, Completion& done) override {
    std::optional<std::string> holder;
    if (args.holder_id) holder = std::string(*args.holder_id);
    return defer(caller, done,
                 [caller, key = std::string(args.key), holder](LockService& s, Completion& d) {
                   UnassignArgs a;
                   a.key = key;
                   if (holder) a.holder_id = *holder;
                   return s.unassign(caller, a, d);
                 });
  }
  Issued holder(const Caller& caller, std::string_view key, Completion& done) override {
    return defer(caller, done, [caller, key = std::string(key)](LockService& s, Completion& d) {
      return s.holder(caller, key, d);
    });
  }
  Issued check(const Caller& caller, const CheckArgs& args, Completion& done) override {
    return defer(caller, done,
                 [caller, key = std::string(args.key), holder = copy(args.holder_id)](
                     LockService& s, Completion& d) {
                   return s.check(caller, CheckArgs{key, view(holder)}, d);
                 });
  }
  Issued set_value(const Caller& caller, const SetArgs& args, Completion& done) override {
    SetArgs kept = args;
    return defer(caller, done,
                 [caller, kept, key = std::string(args.key), value = std::string(args.value)](
                     LockService& s, Completion& d) mutable {
                   kept.key = key;
                   kept.value = value;
                   return s.set_value(caller, kept, d);
                 });
  }
  Issued get_value(const Caller& caller, std::string_view key, Completion& done) override {
    return defer(caller, done, [caller, key = std::string(key)](LockService& s, Completion& d) {
      return s.get_value(caller, key, d);
    });
  }
  Issued delete_keys(const Caller& caller, std::span<const std::string_view> keys,
                     Completion& done) override {
    return defer(caller, done,
                 [caller, owned = std::vector<std::string>(keys.begin(), keys.end())](
                     LockService& s, Completion& d) {
                   const std::vector<std::string_view> views(owned.begin(), owned.end());
                   return s.delete_keys(caller, views, d);
                 });
  }
  Issued expire(const Caller& caller, const ExpireArgs& args, Completion& done) override {
    ExpireArgs kept = args;
    return defer(
        caller, done,
        [caller, kept, key = std::string(args.key)](LockService& s, Completion& d) mutable {
          kept.key = key;
          return s.expire(caller, kept, d);
        });
  }
  Issued count_held(const Caller& caller, std::span<const std::string_view> keys,
                    Completion& done) override {
    return defer(caller, done,
                 [caller, owned = std::vector<std::string>(keys.begin(), keys.end())](
                     LockService& s, Completion& d) {
                   const std::vector<std::string_view> views(owned.begin(), owned.end());
                   return s.count_held(caller, views, d);
                 });
  }
  Issued value(const Caller& caller, const ValueRequest& request, Completion& done) override {
    return defer(caller, done,
                 [caller, r = ValueRequestCopy(request)](LockService& s, Completion& d) {
                   return s.value(caller, r.request(), d);
                 });
  }
  Issued set_rule_set(const Caller& caller, std::string_view toml, Completion& done) override {
    return defer(caller, done, [caller, toml = std::string(toml)](LockService& s, Completion& d) {
      return s.set_rule_set(caller, toml, d);
    });
  }
  Issued get_rule_set(const Caller& caller, Completion& done) override {
    return defer(caller, done,
                 [caller](LockService& s, Completion& d) { return s.get_rule_set(caller, d); });
  }
  Issued delete_rule_set(const Caller& caller, std::string_view name, Completion& done) override {
    return defer(caller, done, [caller, name = std::string(name)](LockService& s, Completion& d) {
      return s.delete_rule_set(caller, name, d);
    });
  }

  void complete(Completion& done, Result<Answer> result) override {
    inner_.complete(done, std::move(result));
  }
  // Inside a step (a transaction, a script) calls take effect at once, as a node over
  // PostgreSQL runs them inline in its database transaction.
  Status atomically(const std::function<void()>& body) override {
    inline_ = true;
    Status st = inner_.atomically(body);
    inline_ = false;
    return st;
  }
  void end_session(SessionId session) override {
    finish_all([session](const Queued& q) { return q.session == session; },
               "the connection closed");
    inner_.end_session(session);
  }
  void shutdown() override {
    finish_all([](const Queued&) { return true; }, "the server is shutting down");
    inner_.shutdown();
  }
  void dispatch() override { inner_.dispatch(); }
  void advance() override { inner_.advance(); }
  std::optional<Millis> next_deadline() const override { return inner_.next_deadline(); }
  ServiceStats stats() const override { return inner_.stats(); }

 private:
  // An optional argument, owned, and a view of it again.
  static std::optional<std::string> copy(std::optional<std::string_view> v) {
    return v ? std::optional<std::string>(*v) : std::nullopt;
  }
  static std::optional<std::string_view> view(const std::optional<std::string>& v) {
    return v ? std::optional<std::string_view>(*v) : std::nullopt;
  }
  struct Queued {
    SessionId session;
    Completion* done;
    std::function<Issued(LockService&, Completion&)> run;
  };

  Issued defer(const Caller& caller, Completion& done,
               std::function<Issued(LockService&, Completion&)> run) {
    if (inline_) return run(inner_, done);
    queued_.push_back(Queued{caller.session, &done, std::move(run)});
    return Issued::kWaiting;
  }

  template <typename Pred>
  void finish_all(Pred pred, const char* why) {
    std::vector<Completion*> ended;
    std::erase_if(queued_, [&](const Queued& q) {
      if (!pred(q)) return false;
      ended.push_back(q.done);
      return true;
    });
    for (Completion* done : ended) done->finish(Error(ErrorCode::kUnavailable, why));
  }

  LockService& inner_;
  std::vector<Queued> queued_;
  bool inline_ = false;  // inside atomically()
};

}  // namespace holdfast::fuzz
