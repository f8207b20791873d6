#include "support/server_process.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/postgres.h"

namespace holdfast::testing {
namespace {

// A node's connection pool ([store] poolSize). Opening the default 32 connections, each with
// its prepared statements, is most of what starting a node costs (over a second on a busy
// machine), and the suites start hundreds of nodes. A few serve a test's handful of clients:
// when all are busy, a call waits for one.
constexpr int kNodePoolSize = 4;

// The node's flags with its pool set to kNodePoolSize: the test's own holdfast.toml (written
// beside it with [store] added, so that the paths in it still resolve) or one of its own in
// `dir`. A config that has a [store] table of its own is left as it is.
void set_node_pool(std::vector<std::string>& extra, const std::string& dir) {
  const std::string store = "\n[store]\npoolSize = " + std::to_string(kNodePoolSize) + "\n";
  for (std::size_t i = 0; i + 1 < extra.size(); ++i) {
    if (extra[i] != "--config") continue;
    std::ifstream in(extra[i + 1]);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("[store]") != std::string::npos) return;
    const std::filesystem::path own =
        std::filesystem::path(extra[i + 1]).parent_path() / "holdfast-test-node.toml";
    std::ofstream(own) << text.str() << store;
    extra[i + 1] = own.string();
    return;
  }
  std::ofstream(dir + "/holdfast-test-node.toml") << store;
  extra.insert(extra.end(), {"--config", dir + "/holdfast-test-node.toml"});
}

}  // namespace

ServerProcess::ServerProcess(std::vector<std::string> extra)
    : ServerProcess(std::move(extra), std::string()) {}

ServerProcess::ServerProcess(std::vector<std::string> extra, std::string data_dir)
    : ServerProcess(std::move(extra), std::move(data_dir), {}) {}

ServerProcess::ServerProcess(std::vector<std::string> extra, std::string data_dir,
                             std::vector<std::string> env)
    : data_dir_(data_dir.empty() ? data_.path() : std::move(data_dir)),
      extra_(std::move(extra)),
      env_(std::move(env)) {
  unix_path_ = data_.path() + "/holdfast.sock";
  for (std::size_t i = 0; i + 1 < extra_.size(); ++i)
    if (extra_[i] == "--store") store_url_ = extra_[i + 1];
  if (store_url_.empty()) {
    if (std::string base = store_url_from_env(); !base.empty()) {
      store_url_ = fresh_store_url(base);
      extra_.insert(extra_.end(), {"--store", store_url_});
    }
  }
  if (!store_url_.empty()) set_node_pool(extra_, data_.path());
  start();
}

ServerProcess::~ServerProcess() {
  if (child_.running()) stop();
}

void ServerProcess::start() {
  // Port 0 the first time; the same port again on restart so clients can reconnect.
  std::string listen = "127.0.0.1:" + std::to_string(port_);
  std::string http = "127.0.0.1:" + std::to_string(http_port_);
  std::vector<std::string> argv = {HOLDFAST_BIN, "serve",  "--data-dir", data_dir_, "--listen",
                                   listen,       "--http", http,         "--unix",  unix_path_};
  argv.insert(argv.end(), extra_.begin(), extra_.end());
  child_ = Child::start(argv, /*capture_stderr=*/true, env_);
  std::string line;
  std::string seen;
  while (child_.read_line(&line, kEventuallyMs)) {
    seen += line + "\n";
    if (line.rfind("holdfast ready", 0) == 0) {
      auto at = line.find("resp=127.0.0.1:");
      if (at != std::string::npos) port_ = std::stoi(line.substr(at + 15));
      auto http_at = line.find("http=127.0.0.1:");
      if (http_at != std::string::npos) http_port_ = std::stoi(line.substr(http_at + 15));
      startup_output_ = std::move(seen);
      return;
    }
  }
  throw std::runtime_error("holdfast serve did not become ready:\n" + seen + line);
}

void ServerProcess::kill9() {
  child_.signal(SIGKILL);
  child_.wait();
}

int ServerProcess::stop() {
  child_.signal(SIGTERM);
  return child_.wait();
}

std::string ServerProcess::drain_output(int timeout_ms, std::size_t max_lines) {
  std::string out, line;
  for (std::size_t n = 0; n < max_lines && child_.read_line(&line, timeout_ms); ++n)
    out += line + "\n";
  return out;
}

bool await_waiters(RespClient& client, const std::string& key, std::int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.call({"LOCK.STATUS", key}).number("waiters") == n) return true;
    // Not a busy loop: on a loaded machine it would take the CPU the server needs to get there.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::string http_get(const ServerProcess& server, const std::string& path) {
  return run({"curl", "-s", "-i", server.http_url() + path}).out;
}

}  // namespace holdfast::testing
