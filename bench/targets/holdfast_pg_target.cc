// Holdfast scale-out target: see holdfast_pg_target.h.
#include "holdfast_pg_target.h"

#include <charconv>
#include <fstream>
#include <stdexcept>

#include "../net.h"
#include "resp_client.h"

namespace holdfast::bench {

int holdfast_pg_nodes(const std::string& target_name) {
  constexpr std::string_view kPrefix = "holdfast-pg";
  if (target_name.rfind(kPrefix, 0) != 0) return 0;
  int n = 0;
  const char* begin = target_name.data() + kPrefix.size();
  const char* end = target_name.data() + target_name.size();
  auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > 16) return 0;
  return n;
}

HoldfastPgTarget::HoldfastPgTarget(std::filesystem::path binary, std::filesystem::path scripts_dir,
                                   int nodes, std::vector<std::string> extra_args, int commit_lanes)
    : binary_(std::move(binary)),
      node_count_(nodes),
      extra_args_(std::move(extra_args)),
      commit_lanes_(commit_lanes),
      postgres_(std::move(scripts_dir)) {}

std::string HoldfastPgTarget::name() const { return "holdfast-pg" + std::to_string(node_count_); }

std::string HoldfastPgTarget::description() const {
  std::string version = command_first_line({binary_.string(), "--version"});
  if (version.empty()) version = binary_.filename().string();
  std::string d = version + "; " + std::to_string(node_count_) + " node" +
                  (node_count_ == 1 ? "" : "s") +
                  " `serve --store postgresql://…` over one PostgreSQL " + postgres_.version() +
                  " (default settings), connections spread round-robin over the nodes";
  if (commit_lanes_ >= 0) d += ", [store] commitLanes = " + std::to_string(commit_lanes_);
  for (const auto& a : extra_args_) d += " " + a;
  return d;
}

void HoldfastPgTarget::start(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(binary_)) {
    throw std::runtime_error("holdfast binary not found at " + binary_.string() +
                             " (build it, or pass --holdfast PATH)");
  }
  postgres_.start(dir / "pg");
  std::ofstream toml(dir / "holdfast.toml");
  toml << "[limits]\nacquirePerUserPerHour = 1000000000000000\n";
  if (commit_lanes_ >= 0) toml << "[store]\ncommitLanes = " << commit_lanes_ << "\n";
  toml.close();
  for (int i = 0; i < node_count_; ++i) {
    const auto node_dir = dir / ("node" + std::to_string(i + 1));
    std::filesystem::create_directories(node_dir);
    const std::uint16_t port = free_loopback_port();
    std::vector<std::string> argv = {binary_.string(), "serve",
                                     "--listen",       "127.0.0.1:" + std::to_string(port),
                                     "--http",         "",
                                     "--unix",         (node_dir / "holdfast.sock").string(),
                                     "--data-dir",     node_dir.string(),
                                     "--store",        postgres_.url(),
                                     "--config",       (dir / "holdfast.toml").string()};
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    nodes_.push_back(ChildProcess::spawn(argv, node_dir / "holdfast.log"));
    ports_.push_back(port);
    if (wait_for_resp_ping(port, 15000) < 0) {
      stop();
      throw std::runtime_error("holdfast node " + std::to_string(i + 1) +
                               " did not answer PING: " + log_tail(node_dir / "holdfast.log"));
    }
  }
}

void HoldfastPgTarget::stop() {
  for (auto& n : nodes_) n.stop();
  nodes_.clear();
  ports_.clear();
  postgres_.stop();
}

std::vector<pid_t> HoldfastPgTarget::server_pids() const {
  std::vector<pid_t> pids = {postgres_.pid()};
  for (const auto& n : nodes_) pids.push_back(n.pid());
  return pids;
}

std::unique_ptr<LockClient> HoldfastPgTarget::connect(EventLoop& loop) {
  if (ports_.empty()) throw std::runtime_error("holdfast-pg is not running");
  const std::uint16_t port = ports_[next_++ % ports_.size()];
  const int fd = connect_loopback(port, 5000);
  if (fd < 0)
    throw std::runtime_error("cannot connect to holdfast node on port " + std::to_string(port));
  return std::make_unique<RespLockClient>(loop, fd, RespDialect::kHoldfast, "");
}

}  // namespace holdfast::bench
