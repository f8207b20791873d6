// One HTTP/1.1 connection (Boost.Beast, on the same event loop as RESP): the socket side of an
// Exchange (exchange.h).
//
//  1. read(): one request, with limits on header (8 KiB) and body (1 MiB) size; an idle
//     keep-alive connection is closed after a minute.
//  2. The exchange handles it. While a call is in flight (a blocking acquire waits, a reply
//     waits for the log) the socket is watched, so a client that disconnects ends its session
//     at once (its waiter leaves the queue; a grant that raced with it is released).
//  3. send(): the response leaves; keep-alive reads the next request.
//  4. GET /v1/events turns the connection into an event stream (event_stream.h) for the rest of
//     its life.
//
// Over TLS (the listener has a certificate) the session first finishes a handshake within the
// context's handshake timeout, and then reads and writes through Boost.Asio's ssl::stream over
// the same TCP stream; a verified client certificate whose common name a caller carries
// (certCommonName) is the caller of requests without a bearer token.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>
#include <optional>
#include <unordered_map>
#include <variant>

#include "server/active_clients.h"
#include "server/events/event_bus.h"
#include "server/http/event_stream.h"
#include "server/http/exchange.h"
#include "server/loop_driver.h"
#include "server/tls/context.h"

namespace holdfast::http {

class Session;

struct HttpHub {
  boost::asio::io_context& io;
  LoopDriver& loop;
  Exchange::Env env;
  SessionId* last_id;  // shared with the RESP hub: one id space for sessions
  std::unordered_map<SessionId, std::weak_ptr<Session>> live;
  // One request's limits (the fuzzer lowers them to reach their edges often).
  std::size_t header_limit = 8 * 1024;
  std::size_t body_limit = 1024 * 1024;
  events::EventBus* events = nullptr;           // GET /v1/events; null: the route answers 503
  std::size_t event_backlog = 4 * 1024 * 1024;  // an event stream's unsent bytes, at most
  // Counts the connections that send requests (the server's; null: not counted).
  ActiveClients* active = nullptr;
};

class Session final : public std::enable_shared_from_this<Session>,
                      public ReplySender,
                      private Exchange::Events,
                      private EventStream::Socket {
 public:
  // With `tls`, the session speaks TLS with that context's certificate.
  Session(HttpHub& hub, boost::asio::ip::tcp::socket socket, tls::ServerContextPtr tls = nullptr);
  void start();
  // The server is stopping: a request in flight is answered (UNAVAILABLE, by the service),
  // then the connection closes.
  void shutdown();
  void flush() override;

 private:
  void response_ready() override;
  void keep_alive(bool call_in_flight) override;

  using Plain = boost::beast::tcp_stream;
  using Secure = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  // The TCP layer under either: timeouts and the socket.
  boost::beast::tcp_stream& tcp();
  void on_handshake(const boost::system::error_code& ec);
  void read();
  void on_read(const boost::system::error_code& ec);
  void handle();
  void send(Response response);
  void watch_for_disconnect();
  void on_readable_while_waiting(const boost::system::error_code& ec);
  void on_secure_read_while_waiting(const boost::system::error_code& ec, std::size_t n);
  void close();
  // EventStream::Socket.
  void start_stream();
  void send_bytes(const std::string& bytes, std::function<void(bool ok)> done) override;
  void wait_for_hangup(std::function<void()> done) override;
  void close_socket() override { close(); }

  HttpHub& hub_;
  tls::ServerContextPtr tls_;  // the certificate it started with, whatever SIGHUP loads
  std::variant<Plain, Secure> stream_;
  const SessionId id_;
  Exchange exchange_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  boost::beast::http::response<boost::beast::http::string_body> response_;
  std::shared_ptr<Session> self_;               // set while a call is in flight
  std::unique_ptr<EventStream> stream_events_;  // after GET /v1/events
  bool keep_alive_ = true;
  ActiveClients::Stamp active_stamp_;
  bool head_ = false;  // the request is HEAD: the response leaves without its body
  bool ready_scheduled_ = false;
  bool closed_ = false;
  bool stopping_ = false;
  bool tls_counted_ = false;       // in holdfast_tls_connections
  bool watching_ = false;          // TLS: a read that watches for a hang-up is pending
  bool read_after_watch_ = false;  // TLS: read() waits for that read to end
};

}  // namespace holdfast::http
