// Holdfast scale-out as the harness starts it: one PostgreSQL (postgres_server.h) and N
// `holdfast serve --store postgresql://...` nodes over it, each on its own port and data
// folder, in local open mode. connect() spreads connections over the nodes round-robin, so
// 64 connections to 3 nodes are 22/21/21. The server's CPU is the sum over PostgreSQL (with
// its backends) and every node.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../process.h"
#include "../target.h"
#include "postgres_server.h"

namespace holdfast::bench {

class HoldfastPgTarget final : public Target {
 public:
  // commit_lanes: the nodes' [store] commitLanes (group commit), -1 for their default.
  HoldfastPgTarget(std::filesystem::path binary, std::filesystem::path scripts_dir, int nodes,
                   std::vector<std::string> extra_args, int commit_lanes = -1);
  ~HoldfastPgTarget() override { stop(); }

  // "holdfast-pg1", "holdfast-pg2", ...
  std::string name() const override;
  std::string description() const override;
  void start(const std::filesystem::path& dir) override;
  void stop() override;
  pid_t server_pid() const override { return postgres_.pid(); }
  std::vector<pid_t> server_pids() const override;
  std::unique_ptr<LockClient> connect(EventLoop& loop) override;
  bool supports_blocking_acquire() const override { return true; }
  bool speaks_resp() const override { return true; }
  std::vector<std::uint16_t> resp_ports() const override { return ports_; }

 private:
  std::filesystem::path binary_;
  int node_count_;
  std::vector<std::string> extra_args_;
  int commit_lanes_;
  PostgresServer postgres_;
  std::vector<ChildProcess> nodes_;
  std::vector<std::uint16_t> ports_;
  std::size_t next_ = 0;
};

// "holdfast-pg<N>" -> N (1..16), else 0.
int holdfast_pg_nodes(const std::string& target_name);

}  // namespace holdfast::bench
