// One HTTP/1.1 connection (Boost.Beast, on the same event loop as RESP).
//
//  1. read(): one request, with limits on header (8 KiB) and body (1 MiB) size; an idle
//     keep-alive connection is closed after a minute.
//  2. handle(): route, authenticate (Authorization: Bearer), run the handler. A blocking
//     acquire/assign parks the request; meanwhile the socket is watched so a client that
//     disconnects leaves the queue at once (and a grant that raced with it is released).
//  3. send(): like RESP replies, a response leaves only once the store has made durable
//     everything it depends on; then keep-alive reads the next request.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <unordered_map>

#include "server/http/cors.h"
#include "server/http/routes.h"
#include "server/blocking_executor.h"
#include "server/loop_driver.h"
#include "server/metrics.h"
#include "server/lock_service.h"

namespace holdfast {
class Authenticator;
}

namespace holdfast::http {

class Session;

struct HttpHub {
  boost::asio::io_context& io;
  LockService& service;
  LoopDriver& loop;
  const Authenticator* auth;  // null: local open mode
  ServerView view;
  Metrics* metrics = nullptr;
  BlockingExecutor* offload = nullptr;  // set when the service's calls block
  std::size_t first_metric = 0;  // metric id of route 0; route i is first_metric + i
  SessionId* last_id;            // shared with the RESP hub: one id space for sessions
  std::unordered_map<SessionId, std::weak_ptr<Session>> live;
  // One request's limits (the fuzzer lowers them to reach their edges often).
  std::size_t header_limit = 8 * 1024;
  std::size_t body_limit = 1024 * 1024;
  cors::Policy cors{};  // [server] corsAllowedOrigins
};

class Session final : public std::enable_shared_from_this<Session>, public WaiterClient {
 public:
  Session(HttpHub& hub, boost::asio::ip::tcp::socket socket);
  void start();
  void shutdown();
  void on_waiter_outcome(const WaiterOutcome& outcome) override;

 private:
  void read();
  void on_read(const boost::system::error_code& ec);
  void handle();
  void send(Response response);
  void write_when_durable(std::uint64_t need);
  void write_now();
  void watch_for_disconnect();
  void on_readable_while_waiting(const boost::system::error_code& ec);
  void close();
  void let_go_of_self();

  HttpHub& hub_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  boost::beast::http::response<boost::beast::http::string_body> response_;
  Principal principal_;
  std::string origin_;  // the current request's Origin header, for its CORS headers
  SessionId id_ = 0;
  WaiterId waiter_ = 0;
  std::shared_ptr<Session> self_while_waiting_;  // set while a blocking acquire waits
  bool waiting_ = false;
  bool offloaded_ = false;  // a call runs on the offload executor; its response comes later
  bool keep_alive_ = true;
  bool head_ = false;  // the request is HEAD: the response leaves without its body
  bool closed_ = false;
  bool stopping_ = false;
};

}  // namespace holdfast::http
