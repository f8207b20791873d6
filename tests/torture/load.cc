#include "torture/load.h"

#include <chrono>
#include <optional>
#include <random>

#include "support/resp_client.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {

using holdfast::testing::RespClient;
using holdfast::testing::RespValue;

Load::Load(LoadOptions options, History& history, FencedResource& resource)
    : options_(std::move(options)), history_(history), resource_(resource) {
  for (int id = 0; id < options_.workers; ++id) threads_.emplace_back([this, id] { run(id); });
}

Load::~Load() { stop(); }

void Load::stop() {
  stopping_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

std::map<std::string, std::int64_t> Load::errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}

void Load::count_error(const std::string& what) {
  std::lock_guard lock(mu_);
  ++errors_[what];
}

void Load::run(int id) {
  std::mt19937 rng(options_.seed * 7919u + static_cast<unsigned>(id));
  const std::string ttl = std::to_string(options_.ttl_ms);
  const std::string timeout = std::to_string(4 * options_.ttl_ms);
  // A stopped or slow server answers late, not never; a dead one closes the connection.
  const int call_timeout_ms = static_cast<int>(5 * options_.ttl_ms) + 30'000;
  auto pause = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  const int server = id % static_cast<int>(options_.ports.size());
  std::optional<RespClient> conn;
  while (!stopping_) {
    if (!conn) {
      try {
        conn.emplace(RespClient::tcp(options_.ports[static_cast<std::size_t>(server)]));
      } catch (const std::exception&) {
        pause(20);  // the server is restarting
        continue;
      }
    }
    const std::string& key = options_.keys[rng() % options_.keys.size()];
    RespValue reply;
    try {
      reply = conn->call({"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", timeout}, call_timeout_ms);
    } catch (const std::exception&) {
      count_error("connection lost");
      conn.reset();
      continue;
    }
    if (reply.is_error()) {
      count_error(reply.error_code());
      if (reply.error_code() != "LOCK_TIMEOUT") pause(20);
      continue;
    }
    Hold hold{key,
              reply.number("token"),
              reply.number("acquiredAt"),
              reply.number("leaseExpiresAt"),
              wall_us(),
              0};
    history_.granted(key, hold.start_us, server);
    ++grants_;

    // The critical section: some work, then a write fenced by the token while the lease runs.
    pause(static_cast<int>(rng() % static_cast<unsigned>(options_.max_section_ms + 1)));
    if (wall_ms() < hold.lease_end_ms) {
      const FencedResource::Outcome outcome = resource_.write(key, hold.token);
      if (!outcome.accepted && outcome.decided_us < hold.lease_end_ms * 1000)
        history_.violation("the fenced resource refused token " + std::to_string(hold.token) +
                           " on " + key + " while its lease ran (it had accepted token " +
                           std::to_string(outcome.highest) + ")");
    }

    // A connection the server already closed cannot carry the release: the server must keep
    // the key until the lease ends.
    if (conn->wait_closed(/*timeout_ms=*/2)) {  // polls for about a millisecond
      hold.end_us = hold.lease_end_ms * 1000;
      history_.add(hold);
      count_error("connection lost");
      conn.reset();
      continue;
    }
    hold.end_us = wall_us();
    try {
      const RespValue released =
          conn->call({"LOCK.RELEASE", key, reply.text("handle")}, call_timeout_ms);
      if (released.is_error()) {
        count_error(released.error_code());
        // Refused, so nothing changed: the key stays held until the lease ends. A node that
        // sent the release to its database and heard nothing back says the outcome is unknown:
        // then it may have happened, as when the connection breaks.
        if (released.error_code() == "STORE_UNAVAILABLE" &&
            released.str.find("outcome=unknown") == std::string::npos)
          hold.end_us = hold.lease_end_ms * 1000;
      }
    } catch (const std::exception&) {
      count_error("connection lost");  // the release may or may not have been taken
      conn.reset();
    }
    history_.add(hold);
  }
}

}  // namespace holdfast::torture
