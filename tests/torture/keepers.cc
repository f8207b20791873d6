#include "torture/keepers.h"

#include <chrono>
#include <optional>

#include "support/resp_client.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {

using holdfast::testing::RespClient;
using holdfast::testing::RespValue;

namespace {

// A server that is stopped or waiting for its database answers late, not never.
constexpr int kCallTimeoutMs = 60'000;

}  // namespace

Keepers::Keepers(KeeperOptions options, History& history)
    : options_(std::move(options)), history_(history) {
  for (std::size_t s = 0; s < options_.ports.size(); ++s) {
    for (int i = 0; i < options_.per_server; ++i) {
      Keeper k;
      k.server = static_cast<int>(s);
      k.session = i % 2 == 0;
      k.key = std::string(k.session ? "session:" : "lease:") + std::to_string(s) + ":" +
              std::to_string(i);
      keepers_.push_back(std::move(k));
    }
  }
  for (std::size_t i = 0; i < keepers_.size(); ++i) threads_.emplace_back([this, i] { keep(i); });
  threads_.emplace_back([this] { steal(); });
}

Keepers::~Keepers() { stop(); }

void Keepers::stop() {
  stopping_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

Keepers::Counts Keepers::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

void Keepers::lost(const std::string& what) {
  {
    std::lock_guard lock(mu_);
    ++counts_.lost;
  }
  history_.violation(what);
}

void Keepers::keep(std::size_t index) {
  std::string key;
  int server = 0;
  bool session = false;
  {
    std::lock_guard lock(mu_);
    key = keepers_[index].key;
    server = keepers_[index].server;
    session = keepers_[index].session;
  }
  const std::string ttl = std::to_string(session ? options_.session_ttl_ms : options_.lease_ttl_ms);
  const int port = options_.ports[static_cast<std::size_t>(server)];
  auto set_holding = [&](bool holding, std::int64_t end_ms) {
    std::lock_guard lock(mu_);
    keepers_[index].holding = holding;
    keepers_[index].believed_end_ms = end_ms;
  };
  std::optional<RespClient> conn;
  std::string handle;
  while (!stopping_) {
    try {
      if (!conn) {
        conn.emplace(RespClient::tcp(port));
        handle.clear();
      }
      if (handle.empty()) {
        std::vector<std::string> acquire = {"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", "30000"};
        if (session) acquire.push_back("SESSION");
        const RespValue grant = conn->call(acquire, kCallTimeoutMs);
        if (grant.is_error()) {
          pause_ms(50);
          continue;
        }
        handle = grant.text("handle");
        set_holding(true, grant.number("leaseExpiresAt"));
        std::lock_guard lock(mu_);
        ++(session ? counts_.session_holds : counts_.leases);
      }
      pause_ms(500);
      if (stopping_) break;
      const RespValue renewed = conn->call({"LOCK.RENEW", key, handle, "TTL", ttl}, kCallTimeoutMs);
      if (renewed.is_error()) continue;  // not made: nothing changed that the keeper relies on
      if (renewed.number("renewed") == 1) {
        set_holding(true, renewed.number("leaseExpiresAt"));
        std::lock_guard lock(mu_);
        ++counts_.renewals;
        continue;
      }
      std::int64_t believed = 0;
      {
        std::lock_guard lock(mu_);
        believed = keepers_[index].believed_end_ms;
      }
      if (session || wall_ms() < believed) {
        lost(std::string(session ? "session hold" : "lease") + " " + key + " on server " +
             std::to_string(server) + " was gone (renew: lease_lost) while " +
             (session ? "its connection stayed open"
                      : "its acknowledged lease ran until " + std::to_string(believed) + " ms"));
      }
      set_holding(false, 0);
      handle.clear();
    } catch (const std::exception&) {
      // The connection broke: a session hold ends with it; a lease lasts until its end.
      if (session) set_holding(false, 0);
      conn.reset();
      handle.clear();
      pause_ms(50);
    }
  }
  if (conn && !handle.empty()) {
    set_holding(false, 0);
    try {
      conn->call({"LOCK.RELEASE", key, handle}, 5'000);
    } catch (const std::exception&) {
    }
  }
}

void Keepers::steal() {
  std::vector<std::optional<RespClient>> conns(options_.ports.size());
  std::size_t turn = 0;
  while (!stopping_) {
    pause_ms(100);
    std::string key;
    int owner = 0;
    {
      std::lock_guard lock(mu_);
      const Keeper& k = keepers_[turn % keepers_.size()];
      key = k.key;
      owner = k.server;
      ++counts_.thefts_tried;
    }
    ++turn;
    // Through another server than the keeper's, when there is one.
    const std::size_t via =
        (static_cast<std::size_t>(owner) + 1 + turn % std::max<std::size_t>(1, conns.size() - 1)) %
        conns.size();
    try {
      if (!conns[via]) conns[via].emplace(RespClient::tcp(options_.ports[via]));
      const RespValue grant = conns[via]->call({"LOCK.TRY", key, "TTL", "500"}, kCallTimeoutMs);
      if (grant.is_error() || grant.is_null()) continue;
      const std::int64_t at_ms = wall_ms();
      bool held = false, session = false;
      std::int64_t believed = 0;
      {
        std::lock_guard lock(mu_);
        for (const Keeper& k : keepers_) {
          if (k.key != key) continue;
          held = k.holding;
          session = k.session;
          believed = k.believed_end_ms;
        }
      }
      if (held && (session || grant.number("acquiredAt") < believed)) {
        lost(std::string(session ? "session hold" : "lease") + " " + key + " of server " +
             std::to_string(owner) + " was granted to another client through server " +
             std::to_string(via) + " at " + std::to_string(at_ms) + " ms while " +
             (session ? "its keeper's connection stayed open"
                      : "its acknowledged lease ran until " + std::to_string(believed) + " ms"));
      }
      conns[via]->call({"LOCK.RELEASE", key, grant.text("handle")}, kCallTimeoutMs);
    } catch (const std::exception&) {
      conns[via].reset();
    }
  }
}

}  // namespace holdfast::torture
