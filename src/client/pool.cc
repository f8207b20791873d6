// The connection pool (see pool.h for the algorithm).
#include "client/pool.h"

#include "holdfast/errors.h"

namespace holdfast::inline v0::client_internal {

namespace {

std::unique_ptr<TlsContext> tls_for(const std::vector<ServerAddress>& addresses,
                                    const ClientOptions& options) {
  for (const ServerAddress& a : addresses)
    if (a.tls) return std::make_unique<TlsContext>(options);
  return nullptr;
}

}  // namespace

ConnectionPool::ConnectionPool(ServerAddress address, const ClientOptions& options)
    : ConnectionPool(std::vector<ServerAddress>{std::move(address)}, options) {}

ConnectionPool::ConnectionPool(std::vector<ServerAddress> addresses, const ClientOptions& options)
    : addresses_(std::move(addresses)), options_(options), tls_(tls_for(addresses_, options)) {}

ServerAddress ConnectionPool::address() const {
  std::lock_guard lock(mu_);
  return addresses_[current_];
}

std::unique_ptr<Connection> ConnectionPool::take_idle() {
  std::vector<std::unique_ptr<Connection>> stale;  // closed outside the lock
  std::unique_ptr<Connection> found;
  {
    std::lock_guard lock(mu_);
    while (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      if (conn->usable()) {
        found = std::move(conn);
        ++busy_;
        break;
      }
      stale.push_back(std::move(conn));
    }
  }
  return found;
}

std::unique_ptr<Connection> ConnectionPool::open_new() {
  std::size_t first;
  {
    std::lock_guard lock(mu_);
    first = current_;
  }
  std::unique_ptr<Connection> conn;
  std::string failures;
  for (std::size_t i = 0; i < addresses_.size() && !conn; ++i) {
    const std::size_t at = (first + i) % addresses_.size();
    auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;
    try {
      conn = Connection::open(addresses_[at], deadline, tls_.get());
    } catch (const ConnectionError& e) {
      // An unreachable node: try the next. Other errors (a refused token) would be the same
      // on every node of the cluster, so they end the call.
      if (addresses_.size() == 1) throw;
      failures += std::string(failures.empty() ? "" : "; ") + e.what();
      continue;
    }
    std::lock_guard lock(mu_);
    current_ = at;
  }
  if (!conn) throw ConnectionError("no node of the cluster could be reached: " + failures);
  std::lock_guard lock(mu_);
  ++busy_;
  ++opened_;
  return conn;
}

void ConnectionPool::give_back(std::unique_ptr<Connection> conn) {
  std::lock_guard lock(mu_);
  --busy_;
  if (conn->broken()) return;
  if (idle_.size() < options_.max_idle_connections || conn->pinned())
    idle_.push_back(std::move(conn));
}

Reply ConnectionPool::call(const std::vector<std::string>& args,
                           std::chrono::milliseconds reply_timeout, bool pin_on_success) {
  const std::string bytes = encode_command(args);
  const std::string& command = args.front();
  std::unique_ptr<Connection> conn = take_idle();
  const bool reused = conn != nullptr;
  if (!conn) conn = open_new();
  // Returns the connection to the pool however this call ends.
  struct Return {
    ConnectionPool* pool;
    std::unique_ptr<Connection>* conn;
    ~Return() {
      if (*conn) pool->give_back(std::move(*conn));
    }
  } give_back_on_exit{this, &conn};

  auto deadline = std::chrono::steady_clock::now() + options_.io_timeout;
  try {
    conn->send(bytes, deadline);
  } catch (const ConnectionError&) {
    if (!reused) throw;
    // Not (fully) delivered, so not run: once more on a fresh connection.
    give_back(std::move(conn));
    conn = open_new();
    deadline = std::chrono::steady_clock::now() + options_.io_timeout;
    conn->send(bytes, deadline);
  }
  Reply reply = conn->receive(std::chrono::steady_clock::now() + reply_timeout, command);
  if (pin_on_success && !reply.is_error() && !reply.is_null()) conn->pin();
  return reply;
}

PoolStats ConnectionPool::stats() const {
  std::lock_guard lock(mu_);
  return PoolStats{idle_.size() + busy_, idle_.size(), opened_};
}

}  // namespace holdfast::inline v0::client_internal
