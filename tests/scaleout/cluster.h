// Three Holdfast nodes over one PostgreSQL, for the scale-out tests.
//
// One throw-away PostgreSQL serves the whole test binary (started by a gtest global
// environment, stopped at the end). Each Cluster makes a fresh schema in it, so every test
// starts from no holds, token 1 and no rule set, and starts its nodes on free ports with a
// short session grace (the nodes heartbeat every grace/3).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/postgres.h"
#include "support/server_process.h"

namespace holdfast::testing {

// The binary's PostgreSQL (its base URL, without a schema).
const std::string& postgres_url();

// Waits until some node has registered a wait for `key` in the database (holdfast_waits: the
// first waiter of a node does so before its first attempt); false if none ever does.
bool await_registered_wait(const std::string& store_url, const std::string& key);

class Cluster {
 public:
  // Short, so that the tests of a dead node's session holds wait little; long enough that a
  // live node on a machine busy with builds never misses it (it heartbeats every grace/3).
  static constexpr int kSessionGraceMs = 3000;

  // `nodes` nodes over a fresh schema; `extra` are more flags for every node.
  explicit Cluster(int nodes = 3, std::vector<std::string> extra = {});

  ServerProcess& node(int i) { return *nodes_[static_cast<std::size_t>(i)]; }
  // When node `i` last told the database it was alive (holdfast_nodes.heartbeat_at, by the
  // database clock): its session holds live until the grace has passed from then.
  std::int64_t last_heartbeat(int i);
  int size() const { return static_cast<int>(nodes_.size()); }
  const std::string& store_url() const { return store_url_; }
  std::vector<std::string> node_flags() const;

 private:
  std::string store_url_;
  std::vector<std::string> extra_;
  std::vector<std::unique_ptr<ServerProcess>> nodes_;
};

}  // namespace holdfast::testing
