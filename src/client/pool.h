// A small pool of connections to one server (or to one of a cluster's nodes), shared by
// every thread of a Client.
//
// 1. A call takes the most recently returned idle connection that is still usable (a server
//    restart closes idle connections; they are dropped here, not discovered by a failing call),
//    else opens a new one. Busy connections are not capped: a blocking acquire occupies its
//    connection for its whole wait, and a release must never queue behind such waits.
// 2. The command is sent. If sending fails on a reused connection, the server cannot have run
//    it, so it is sent once more on a fresh connection. If the reply is lost, the call fails
//    with ConnectionError and the connection is dropped.
// 3. A healthy connection goes back to the idle list; beyond max_idle_connections it is
//    closed, unless it is pinned (it took a session hold, which lives as long as it does).
// 4. Node lists (scale-out): a new connection goes to the current node; when that node cannot
//    be reached it tries the next, in list order and round, each within connect_timeout, and
//    the first that answers becomes current (the pool stays there until it fails in turn).
//    Only connecting fails over: a call whose reply was lost still fails with ConnectionError
//    (it may have run), and a server's error reply is an answer, not a failure. Idle
//    connections to a node that went away are dropped by step 1, so new calls move on.
// 5. TLS (rediss://): one TlsContext for the pool, loaded when it is made (a file that does not
//    load is InvalidArgumentError then, not at the first call).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/connection.h"
#include "client/resp_codec.h"
#include "client/tls.h"
#include "client/url.h"
#include "holdfast/options.h"

namespace holdfast::inline v0::client_internal {

struct PoolStats {
  std::size_t open = 0;  // idle + busy
  std::size_t idle = 0;
  std::uint64_t opened = 0;  // connections opened over the pool's life
};

class ConnectionPool {
 public:
  ConnectionPool(ServerAddress address, const ClientOptions& options);
  // REQUIRES: !addresses.empty(). The first is current at the start.
  ConnectionPool(std::vector<ServerAddress> addresses, const ClientOptions& options);

  // Runs one command and returns its reply (error replies included) within `reply_timeout`.
  // `pin_on_success`: keep the connection open for good if the reply is not an error or nil
  // (a session hold was granted on it). Throws ConnectionError / ProtocolError, or the mapped
  // handshake error of a new connection (UnauthenticatedError).
  Reply call(const std::vector<std::string>& args, std::chrono::milliseconds reply_timeout,
             bool pin_on_success = false);

  PoolStats stats() const;
  // The node new connections go to now.
  ServerAddress address() const;
  std::size_t node_count() const { return addresses_.size(); }

 private:
  // An idle usable connection, or nullptr.
  std::unique_ptr<Connection> take_idle();
  std::unique_ptr<Connection> open_new();
  void give_back(std::unique_ptr<Connection> conn);

  const std::vector<ServerAddress> addresses_;
  std::size_t current_ = 0;  // index into addresses_, under mu_
  const ClientOptions options_;
  // rediss:// addresses: the CAs and client certificate every connection uses.
  const std::unique_ptr<TlsContext> tls_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::size_t busy_ = 0;
  std::uint64_t opened_ = 0;
};

}  // namespace holdfast::inline v0::client_internal
