// Starts the real `holdfast serve` for a test on a free port, a private data dir and Unix
// socket, and waits for its ready line. Stops it (SIGTERM) in the destructor.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/resp_client.h"

namespace holdfast::testing {

class ServerProcess {
 public:
  // `extra` are more flags for `serve` (e.g. {"--fsync", "never"}). The data dir persists
  // across restart() so durability can be tested. With HOLDFAST_TEST_STORE_URL set (and no
  // --store in `extra`) the server runs as a node over PostgreSQL, in a schema of its own that
  // also persists across restart(). A node's pool is a few connections, not the default 32
  // (server_process.cc says why).
  explicit ServerProcess(std::vector<std::string> extra = {});
  // With a data dir of the test's own (a small file system it mounted, say); the Unix socket
  // stays in a private temporary dir.
  ServerProcess(std::vector<std::string> extra, std::string data_dir);
  // And with more environment for the server ("NAME=value"; LD_PRELOAD, say), on every start.
  ServerProcess(std::vector<std::string> extra, std::string data_dir, std::vector<std::string> env);
  ~ServerProcess();

  int port() const { return port_; }
  int http_port() const { return http_port_; }
  std::string http_url() const { return "http://127.0.0.1:" + std::to_string(http_port_); }
  const std::string& unix_path() const { return unix_path_; }
  const std::string& data_dir() const { return data_dir_; }
  // The --store URL this server was started with ("" for the embedded store).
  const std::string& store_url() const { return store_url_; }
  std::string url() const { return "holdfast://127.0.0.1:" + std::to_string(port_); }
  RespClient client() const { return RespClient::tcp(port_); }

  void start();
  void kill9();
  // SIGTERM and wait; returns the exit code.
  int stop();
  void restart() {
    if (child_.running()) stop();
    start();
  }
  pid_t pid() const { return child_.pid(); }
  // What the server printed on stdout/stderr before its ready line, at the last start().
  const std::string& startup_output() const { return startup_output_; }
  // Lines the server printed on stdout/stderr after its ready line, read until none comes for
  // timeout_ms, or max_lines of them (a server that logs without pause never goes quiet).
  std::string drain_output(int timeout_ms = 100, std::size_t max_lines = 10000);

 private:
  TempDir data_;
  std::string data_dir_;
  std::vector<std::string> extra_;
  std::vector<std::string> env_;
  std::string store_url_;
  int port_ = 0;
  int http_port_ = 0;
  std::string unix_path_;
  std::string startup_output_;
  Child child_;
};

// Polls LOCK.STATUS until `key` has `n` waiters (the server queued them); false if it never does
// (after kEventually).
bool await_waiters(RespClient& client, const std::string& key, std::int64_t n);

// GET `path` from the server's HTTP port with `curl -s -i`: the status line, headers and body.
std::string http_get(const ServerProcess& server, const std::string& path);

}  // namespace holdfast::testing
