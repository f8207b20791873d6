#include "server/http/session.h"

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <string>

#include "server/tls/handshake.h"

namespace holdfast::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

constexpr auto kIdleTimeout = std::chrono::seconds(60);

// "8 KiB", "1 MiB", or a number of bytes.
std::string size_text(std::size_t n) {
  if (n % (1024 * 1024) == 0) return std::to_string(n / (1024 * 1024)) + " MiB";
  if (n % 1024 == 0) return std::to_string(n / 1024) + " KiB";
  return std::to_string(n) + " bytes";
}

// The peer's address, for the log line of a failed handshake ("" when it is gone).
std::string peer_text(const boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  return ec ? std::string() : peer.address().to_string() + ":" + std::to_string(peer.port());
}

std::variant<beast::tcp_stream, beast::ssl_stream<beast::tcp_stream>> make_stream(
    boost::asio::ip::tcp::socket socket, const tls::ServerContextPtr& tls) {
  if (tls)
    return std::variant<beast::tcp_stream, beast::ssl_stream<beast::tcp_stream>>(
        std::in_place_index<1>, std::move(socket), tls->ssl);
  return std::variant<beast::tcp_stream, beast::ssl_stream<beast::tcp_stream>>(
      std::in_place_index<0>, std::move(socket));
}

// Why a handshake failed, from the error that ended it.
tls::HandshakeFailure handshake_failure(const boost::system::error_code& ec) {
  if (ec == beast::error::timeout) return tls::HandshakeFailure::kTimeout;
  if (ec.category() == boost::asio::error::get_ssl_category())
    return tls::classify_failure(static_cast<unsigned long>(static_cast<unsigned int>(ec.value())));
  return tls::HandshakeFailure::kClosed;  // end of stream, reset, or truncated
}

}  // namespace

Session::Session(HttpHub& hub, boost::asio::ip::tcp::socket socket, tls::ServerContextPtr tls)
    : hub_(hub),
      tls_(std::move(tls)),
      stream_(make_stream(std::move(socket), tls_)),
      id_(++*hub.last_id),
      exchange_(hub.env, id_, *this) {}

beast::tcp_stream& Session::tcp() {
  if (auto* secure = std::get_if<Secure>(&stream_)) return secure->next_layer();
  return std::get<Plain>(stream_);
}

void Session::start() {
  hub_.live[id_] = weak_from_this();
  auto* secure = std::get_if<Secure>(&stream_);
  if (secure == nullptr) {
    read();
    return;
  }
  // The handshake has the handshake timeout; other connections are served meanwhile.
  tcp().expires_after(tls_->handshake_timeout);
  secure->async_handshake(
      boost::asio::ssl::stream_base::server,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->on_handshake(ec); });
}

void Session::on_handshake(const boost::system::error_code& ec) {
  if (closed_) return;
  auto& secure = std::get<Secure>(stream_);
  if (ec) {
    // A handshake the server's own shutdown cut short is no failure of the client's.
    if (!stopping_)
      tls::report_failure(hub_.env.metrics, handshake_failure(ec), ec.message(), id_,
                          peer_text(tcp().socket()));
    close();
    return;
  }
  tls_counted_ = true;
  if (hub_.env.metrics != nullptr) hub_.env.metrics->tls_opened();
  exchange_.set_certificate_caller(tls::certificate_caller(secure.native_handle(), hub_.env.auth));
  read();
}

void Session::read() {
  if (closed_ || stopping_) {
    close();
    return;
  }
  if (watching_) {
    // The read that watched for a hang-up is still pending: end it first (a TLS stream takes
    // one read at a time); its handler comes back here.
    read_after_watch_ = true;
    boost::system::error_code ignored;
    tcp().socket().cancel(ignored);
    return;
  }
  head_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(hub_.header_limit));
  parser_->body_limit(hub_.body_limit);
  tcp().expires_after(kIdleTimeout);
  std::visit(
      [this](auto& stream) {
        bhttp::async_read(stream, buffer_, *parser_,
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t) { self->on_read(ec); });
      },
      stream_);
}

void Session::on_read(const boost::system::error_code& ec) {
  if (closed_) return;
  if (ec == bhttp::error::end_of_stream || ec == boost::asio::error::eof ||
      ec == beast::error::timeout || ec == boost::asio::error::operation_aborted ||
      ec == boost::asio::error::connection_reset) {
    close();
    return;
  }
  if (ec) {
    keep_alive_ = false;
    Response r;
    if (ec == bhttp::error::body_limit) {
      error_response(invalid_argument("request body is larger than " + size_text(hub_.body_limit)),
                     r);
      r.status = 413;
    } else if (ec == bhttp::error::header_limit) {
      error_response(
          invalid_argument("request headers are larger than " + size_text(hub_.header_limit)), r);
      r.status = 431;
    } else {
      error_response(invalid_argument("malformed HTTP request: " + ec.message()), r);
    }
    send(std::move(r));
    return;
  }
  handle();
}

void Session::handle() {
  if (hub_.active != nullptr) hub_.active->sent(active_stamp_);
  const auto& req = parser_->get();
  keep_alive_ = req.keep_alive();
  head_ = req.method() == bhttp::verb::head;
  std::string_view target(req.target().data(), req.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  std::string_view query =
      path.size() < target.size() ? target.substr(path.size() + 1) : std::string_view();
  auto header = [&req](bhttp::field f) {
    const auto v = req[f];
    return std::string_view(v.data(), v.size());
  };
  const Request request{std::string_view(req.method_string().data(), req.method_string().size()),
                        path,
                        query,
                        req.body(),
                        header(bhttp::field::authorization),
                        header(bhttp::field::origin),
                        header(bhttp::field::access_control_request_method),
                        header(bhttp::field::access_control_request_headers),
                        std::string_view(req["Last-Event-ID"].data(), req["Last-Event-ID"].size()),
                        header(bhttp::field::if_none_match)};
  const bool ready = exchange_.handle(request);
  if (ready && exchange_.response().stream && !head_ && hub_.events != nullptr) {
    start_stream();
  } else if (ready) {
    Response& r = exchange_.response();
    if (r.stream) {
      // HEAD, or no events on this server: the head of the stream without it.
      r.stream.reset();
      if (hub_.events == nullptr)
        error_response(Error(ErrorCode::kUnavailable, "lock events are not available"), r);
    }
    send(std::move(r));
  } else {
    // The answer comes later: meanwhile a client that hangs up must end its session.
    tcp().expires_never();
    watch_for_disconnect();
  }
  hub_.loop.after_event();
}

// While a request waits for its answer, a readable socket means either the client hung up
// (recv reads 0 bytes) or it pipelined another request. Pipelined bytes move into the parse
// buffer, where the next read() finds them, so that the socket can be watched again: the next
// readiness is then more data or the hang-up. A client that pipelines more than one request
// can hold is no longer watched (its hang-up then shows when the answer is written).
void Session::watch_for_disconnect() {
  if (auto* secure = std::get_if<Secure>(&stream_)) {
    // Over TLS a hang-up (or a pipelined request) is read through the session: raw bytes
    // would be records, not requests.
    watching_ = true;
    constexpr std::size_t kChunk = 4096;
    secure->async_read_some(
        buffer_.prepare(kChunk),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          self->on_secure_read_while_waiting(ec, n);
        });
    return;
  }
  tcp().socket().async_wait(boost::asio::ip::tcp::socket::wait_read,
                            [self = shared_from_this()](const boost::system::error_code& ec) {
                              if (!self->exchange_.busy() || self->closed_) return;
                              self->on_readable_while_waiting(ec);
                            });
}

void Session::on_readable_while_waiting(const boost::system::error_code& ec) {
  if (ec) {
    close();
    return;
  }
  constexpr std::size_t kChunk = 4096;
  auto space = buffer_.prepare(kChunk);
  const ssize_t n =
      ::recv(tcp().socket().native_handle(), space.data(), space.size(), MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    close();
    return;
  }
  if (n > 0) buffer_.commit(static_cast<std::size_t>(n));
  if (buffer_.size() + kChunk <= hub_.header_limit + hub_.body_limit) watch_for_disconnect();
}

void Session::on_secure_read_while_waiting(const boost::system::error_code& ec, std::size_t n) {
  watching_ = false;
  if (closed_) return;
  if (n > 0) buffer_.commit(n);
  if (read_after_watch_) {
    // The answer went out and read() cancelled this watch: read the next request.
    read_after_watch_ = false;
    if (!ec || ec == boost::asio::error::operation_aborted) {
      read();
    } else {
      close();
    }
    return;
  }
  if (ec) {
    close();
    return;
  }
  if (exchange_.busy() && buffer_.size() + 4096 <= hub_.header_limit + hub_.body_limit)
    watch_for_disconnect();
}

void Session::response_ready() {
  if (ready_scheduled_ || closed_) return;
  ready_scheduled_ = true;
  hub_.loop.flush_later(shared_from_this());
}

void Session::flush() {
  ready_scheduled_ = false;
  if (closed_ || exchange_.busy()) return;
  send(std::move(exchange_.response()));
}

void Session::keep_alive(bool call_in_flight) {
  if (call_in_flight) {
    self_ = shared_from_this();
  } else {
    let_go_from_loop(hub_.io, self_);
  }
}

void Session::send(Response r) {
  response_ = {};
  response_.version(11);
  response_.result(static_cast<unsigned>(r.status));
  response_.set(bhttp::field::server, "holdfast");
  if (!r.content_type.empty()) response_.set(bhttp::field::content_type, r.content_type);
  response_.keep_alive(keep_alive_ && !stopping_);
  for (const auto& [name, value] : r.headers) response_.set(name, value);
  response_.body() = std::move(r.body);
  response_.prepare_payload();
  if (head_) response_.body().clear();  // HEAD: GET's headers, Content-Length included, no body
  tcp().expires_after(kIdleTimeout);
  std::visit(
      [this](auto& stream) {
        bhttp::async_write(
            stream, response_,
            [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
              if (ec || !self->response_.keep_alive()) {
                self->close();
                return;
              }
              self->read();
            });
      },
      stream_);
}

void Session::start_stream() {
  tcp().expires_never();
  EventStream::Socket& socket = *this;
  stream_events_ = std::make_unique<EventStream>(hub_.io, *hub_.events, socket, hub_.event_backlog);
  const Response& head = exchange_.response();
  stream_events_->start(head, *head.stream, exchange_.principal());
}

void Session::send_bytes(const std::string& bytes, std::function<void(bool ok)> done) {
  std::visit(
      [&](auto& stream) {
        boost::asio::async_write(
            stream, boost::asio::buffer(bytes),
            [self = shared_from_this(), done = std::move(done)](const boost::system::error_code& ec,
                                                                std::size_t) { done(!ec); });
      },
      stream_);
}

void Session::wait_for_hangup(std::function<void()> done) {
  constexpr std::size_t kChunk = 4096;
  if (auto* secure = std::get_if<Secure>(&stream_)) {
    // Over TLS the peer's bytes are records: read (and drop) them through the session.
    secure->async_read_some(
        buffer_.prepare(kChunk), [self = shared_from_this(), done = std::move(done)](
                                     const boost::system::error_code& ec, std::size_t) {
          if (self->closed_) return;
          if (!ec) {
            self->wait_for_hangup(done);  // a reader that talks on an event stream is ignored
            return;
          }
          done();
        });
    return;
  }
  tcp().socket().async_wait(
      boost::asio::ip::tcp::socket::wait_read,
      [self = shared_from_this(), done = std::move(done)](const boost::system::error_code& ec) {
        if (self->closed_) return;
        char sink[kChunk];
        const ssize_t n =
            ec ? 0 : ::recv(self->tcp().socket().native_handle(), sink, sizeof(sink), MSG_DONTWAIT);
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) {
          self->wait_for_hangup(done);  // a reader that talks on an event stream is ignored
          return;
        }
        done();
      });
}

void Session::shutdown() {
  stopping_ = true;
  if (stream_events_) {
    stream_events_->finish();
    return;
  }
  // A request in flight is answered by the service; its response then closes the connection.
  if (exchange_.busy()) return;
  // Cancelling the pending read (or write) ends in close().
  boost::system::error_code ignored;
  tcp().socket().cancel(ignored);
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  if (stream_events_) stream_events_->end();
  exchange_.end();
  hub_.live.erase(id_);
  if (tls_counted_ && hub_.env.metrics != nullptr) hub_.env.metrics->tls_closed();
  boost::system::error_code ignored;
  tcp().socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  tcp().socket().close(ignored);
  hub_.loop.after_event();
}

}  // namespace holdfast::http
