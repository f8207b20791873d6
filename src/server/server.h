// Server: the event loop, its listeners (RESP over TCP and a Unix socket, HTTP), signal
// handling and graceful shutdown. Owns nothing of the lock state: that is the LockService's,
// which it is given at start().
//
//  1. start(service): load the TLS certificate if one is configured (tls/load.h), refuse open
//     mode on a non-loopback listener, bind every listener, then
//     print one "holdfast ready ..." line on stdout (tests and scripts wait for it; nothing is
//     answered before every listener is bound), and tell a service manager that asked, over
//     $NOTIFY_SOCKET (sd_notify.h). The service is ready to serve (recovered).
//  2. run(): serve until SIGINT/SIGTERM. SIGHUP reloads the credentials (on_reload) and the
//     TLS certificate, key and CA for the connections accepted after it.
//  3. Shutdown: tell the service manager, stop accepting, answer blocked acquires with
//     UNAVAILABLE, send pending
//     replies, close connections, then flush and close the store. A connection that does not
//     drain within a few seconds is cut off.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/idle_poll.h"
#include "core/loop_hooks.h"
#include "script/engine.h"
#include "server/active_clients.h"
#include "server/config.h"
#include "server/events/event_bus.h"
#include "server/http/session.h"
#include "server/loop_driver.h"
#include "server/metrics.h"
#include "server/pubsub/registry.h"
#include "server/resp/connection.h"
#include "server/tls/context.h"
#include "server/tls/load.h"
#include "service/lock_service.h"

namespace holdfast {

class Server {
 public:
  // `clock` and `auth` (null: local open mode) must outlive the server.
  Server(const ServerConfig& config, const Clock& clock, const Authenticator* auth);
  ~Server();

  // The service's WakeLoop (lock_service.h): thread-safe.
  WakeLoop waker() { return loop_.waker(); }
  // `service` and `hooks` must outlive the server. `hooks`: the store that commits in the
  // loop's own moments (core/loop_hooks.h); null for none.
  Status start(LockService& service, LoopHooks* hooks = nullptr);
  // The TLS context the listeners start with, loaded before anything else so that a bad file
  // stops the start first (tls/load.h); without it start() loads the configured one itself.
  void use_tls(tls::Loaded loaded);
  // Called on the loop when SIGHUP arrives (credentials reload).
  void on_reload(std::function<void()> fn) { reload_ = std::move(fn); }
  // Serves until a stop signal; returns when every connection is closed and the store flushed.
  void run();
  // The bound addresses, e.g. "127.0.0.1:7420" (port 0 in the config becomes the real port).
  const std::string& resp_address() const { return resp_address_; }
  const std::string& http_address() const { return http_address_; }

  boost::asio::io_context& io() { return io_; }
  // Pub/sub (a node over PostgreSQL relays it to the other nodes: set_relay, deliver).
  pubsub::Registry& pubsub() { return pubsub_; }
  std::size_t connection_count() const {
    return (hub_ ? hub_->live.size() : 0) + (http_hub_ ? http_hub_->live.size() : 0);
  }

 private:
  Status check_open_mode() const;
  // Opens, binds and listens on `address` (host:port); `bound_address` gets the real port.
  Status bind_tcp(const std::string& address, const char* what,
                  std::optional<boost::asio::ip::tcp::acceptor>& acceptor,
                  std::string& bound_address);
  Status bind_unix();
  void accept_http();
  void accept_tcp();
  void accept_unix();
  void pause_accepting(const boost::system::error_code& ec, void (Server::*resume)());
  void adopt(resp::Connection::Socket socket, tls::ServerContextPtr tls);
  Status load_tls();
  void reload_tls();
  void begin_shutdown();
  void wait_for_reload();
  void drain(std::chrono::steady_clock::time_point deadline);
  void run_loop();

  ServerConfig config_;
  const Clock& clock_;
  const Authenticator* auth_;
  // One thread runs the loop and does all socket I/O; other threads only post to it, so the
  // reactor needs no per-descriptor locking (the scheduler keeps its lock for those posts).
  boost::asio::io_context io_{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  LockService* service_ = nullptr;
  LoopHooks no_hooks_;
  LoopHooks* hooks_ = &no_hooks_;
  LoopDriver loop_;
  Metrics metrics_;
  script::Engine scripts_;  // EVAL's Lua state and script cache, shared by every connection
  pubsub::Registry pubsub_;
  std::optional<events::EventBus> events_;  // made at start(), over the service
  resp::ServerInfo info_;
  http::ServerView view_;
  http::cors::Policy cors_;
  SessionId last_session_ = 0;
  // The connections that sent requests lately: the most clients a commit on the loop waits for.
  ActiveClients active_;
  std::optional<resp::ConnectionHub> hub_;
  std::optional<http::HttpHub> http_hub_;
  std::optional<boost::asio::ip::tcp::acceptor> tcp_;
  std::optional<boost::asio::local::stream_protocol::acceptor> unix_;
  std::optional<boost::asio::ip::tcp::acceptor> http_;
  boost::asio::signal_set signals_;
  boost::asio::signal_set reload_signal_;
  std::function<void()> reload_;
  // With a certificate: the context new TCP and HTTP connections get (SIGHUP replaces it).
  tls::ServerContextPtr tls_;
  boost::asio::steady_timer shutdown_deadline_;
  boost::asio::steady_timer accept_pause_;
  boost::asio::steady_timer commit_wait_;  // the end of a wait for more changes to commit
  std::optional<std::chrono::steady_clock::time_point> commit_wait_until_;  // while it is set
  static constexpr std::chrono::microseconds kCommitWaitSlack{50};
  // A wait for more changes this short is polled, not slept: see run_loop.
  static constexpr std::chrono::microseconds kPolledCommitWait{200};
  std::vector<void (Server::*)()> paused_listeners_;  // accept again when accept_pause_ fires
  std::chrono::steady_clock::time_point last_accept_warning_{};
  std::uint64_t accept_failures_ = 0;
  std::string resp_address_;
  std::string http_address_;
  bool stopping_ = false;
  IdlePoll idle_poll_;  // max 0 (idlePollUs 0, the default; a node over PostgreSQL): never polls
  // --fsync never: a commit wait is a lazy write, which no reply waits for (run_loop). (With
  // horizon the log's writer writes, and the loop has no commit wait.)
  bool lazy_log_ = false;
};

}  // namespace holdfast
