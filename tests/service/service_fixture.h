// Test support for the service layer: a Completion that records what a front end would be
// told, and a harness that drives a Policy over an EmbeddedBackend as the event loop does
// (issue, then dispatch after each piece of work; advance when the clock moves; wait for the
// store's wake-up when answers wait for the log).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "core/principal.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
#include "store/memory_store.h"
#include "store/store.h"

namespace holdfast::testing {

// Every answer of the calls made with it, in the order they finished.
class Recorder final : public Completion {
 public:
  void finish(Result<Answer> result) override { results.push_back(std::move(result)); }

  std::size_t size() const { return results.size(); }
  bool empty() const { return results.empty(); }
  const Result<Answer>& at(std::size_t i) const { return results.at(i); }
  bool granted(std::size_t i) const {
    return at(i).ok() && std::holds_alternative<HoldState>(*at(i));
  }
  const HoldState& hold(std::size_t i) const { return std::get<HoldState>(*at(i)); }
  ErrorCode code(std::size_t i) const { return at(i).error().code; }
  // The value of an error detail (std::int64_t or std::string).
  DetailValue detail(std::size_t i, std::string_view name) const {
    for (const auto& [n, v] : at(i).error().details)
      if (n == name) return v;
    ADD_FAILURE() << "no detail " << name;
    return std::int64_t{0};
  }

  std::vector<Result<Answer>> results;
};

// A Policy over an EmbeddedBackend over `store`, and the loop's side of it.
class EmbeddedNode {
 public:
  EmbeddedNode(const Clock& clock, Store& store, PolicyOptions options = {})
      : backend(clock, store, [this] { wake(); }), policy(backend, clock, options) {}

  Status recover() { return backend.recover(); }

  // The loop after a piece of work: deliver what is ready.
  void dispatch() { policy.dispatch(); }
  // The loop's timer: run what is due, then deliver.
  void advance() {
    policy.advance();
    policy.dispatch();
  }
  // Dispatches until `done` holds, waiting for the store's wake-ups in between (answers that
  // wait for the log); fails the test after 10 s.
  bool dispatch_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      policy.dispatch();
      if (done()) return true;
      std::unique_lock lock(mu_);
      if (!cv_.wait_until(lock, deadline, [this] { return woken_; })) {
        ADD_FAILURE() << "no answer within 10 s";
        return false;
      }
      woken_ = false;
    }
  }
  // Issues `call` with a fresh recorder and returns its one answer, once it has come.
  Result<Answer> answer(const std::function<Issued(LockService&, Completion&)>& call) {
    Recorder r;
    (void)call(policy, r);
    if (!dispatch_until([&] { return !r.empty(); })) return Error(ErrorCode::kInternal, "none");
    return std::move(r.results.front());
  }

  EmbeddedBackend backend;
  Policy policy;

 private:
  void wake() {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
};

inline Principal member(std::string id) {
  return Principal{PrincipalKind::kMember, std::move(id), Role::kMember, {}};
}

// A node over a MemoryStore on a fake clock, recovered, and the two callers the policy tests
// use: the local owner, and alice, a member.
class NodeTest : public ::testing::Test {
 protected:
  NodeTest() { EXPECT_TRUE(node.recover().ok()); }

  // Installs a rule set as the owner; the test fails if it is refused.
  void set_rules(const std::string& toml) {
    auto out = node.answer(
        [&](LockService& s, Completion& d) { return s.set_rule_set(owner_caller, toml, d); });
    ASSERT_TRUE(out.ok()) << out.error().message;
  }

  FakeClock clock;
  MemoryStore store;
  EmbeddedNode node{clock, store};
  Principal owner = Principal::local_owner();
  Principal alice = member("alice");
  Caller owner_caller{&owner, 1};
  Caller alice_caller{&alice, 2};
};

}  // namespace holdfast::testing
