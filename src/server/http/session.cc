#include "server/http/session.h"

#include <sys/socket.h>

#include <boost/beast/http/write.hpp>
#include <chrono>
#include <string>

#include "auth/authenticator.h"

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

}  // namespace

Session::Session(HttpHub& hub, boost::asio::ip::tcp::socket socket)
    : hub_(hub), stream_(std::move(socket)), id_(++*hub.last_id) {}

void Session::start() {
  hub_.live[id_] = weak_from_this();
  read();
}

void Session::read() {
  if (closed_ || stopping_) {
    close();
    return;
  }
  head_ = false;
  origin_.clear();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(hub_.header_limit));
  parser_->body_limit(hub_.body_limit);
  stream_.expires_after(kIdleTimeout);
  bhttp::async_read(stream_, buffer_, *parser_,
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) { self->on_read(ec); });
}

void Session::on_read(const boost::system::error_code& ec) {
  if (closed_) return;
  if (ec == bhttp::error::end_of_stream || ec == boost::asio::error::eof || ec == beast::error::timeout ||
      ec == boost::asio::error::operation_aborted || ec == boost::asio::error::connection_reset) {
    close();
    return;
  }
  if (ec) {
    keep_alive_ = false;
    Response r;
    if (ec == bhttp::error::body_limit) {
      error_response(invalid_argument("request body is larger than " + size_text(hub_.body_limit)), r);
      r.status = 413;
    } else if (ec == bhttp::error::header_limit) {
      error_response(invalid_argument("request headers are larger than " + size_text(hub_.header_limit)), r);
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
  const auto& req = parser_->get();
  keep_alive_ = req.keep_alive();
  head_ = req.method() == bhttp::verb::head;
  std::string_view target(req.target().data(), req.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  std::string_view query = path.size() < target.size() ? target.substr(path.size() + 1) : std::string_view();
  Request request{std::string_view(req.method_string().data(), req.method_string().size()), path, query, req.body()};
  auto field_value = [&req](bhttp::field f) {
    auto v = req[f];
    return std::string_view(v.data(), v.size());
  };
  origin_ = std::string(field_value(bhttp::field::origin));
  if (auto answer = cors::preflight(hub_.cors, request.method, origin_,
                                    field_value(bhttp::field::access_control_request_method),
                                    field_value(bhttp::field::access_control_request_headers))) {
    send(std::move(*answer));
    return;
  }
  Response response;
  const Route* route = match_route(request.method, request.path, response);
  if (route == nullptr) {
    send(std::move(response));
    return;
  }
  if (hub_.auth == nullptr) {
    principal_ = Principal::local_owner();
  } else if (!route->open) {
    auto header = req[bhttp::field::authorization];
    std::string_view auth(header.data(), header.size());
    std::optional<Principal> who;
    if (auth.substr(0, 7) == "Bearer ") who = hub_.auth->authenticate(std::nullopt, auth.substr(7));
    if (!who) {
      error_response(Error(ErrorCode::kUnauthenticated, "missing or unknown bearer token"), response);
      send(std::move(response));
      return;
    }
    principal_ = std::move(*who);
  }
  // Open routes (health, metrics) never call into the store, so they stay on the loop, which
  // owns the connection counts that /metrics reports.
  if (hub_.offload != nullptr && !route->open) {
    // The call may block (a waiting acquire): watch the socket meanwhile, so a client that
    // hangs up ends its session (the service wakes its waiter and undoes a racing grant).
    stream_.expires_never();
    offloaded_ = true;
    watch_for_disconnect();
    hub_.offload->submit([self = shared_from_this(), route, request] {
      Response response;
      RouteContext ctx{self->hub_.service, Caller{&self->principal_, self->id_}, self.get(), self->hub_.view};
      auto start = std::chrono::steady_clock::now();
      route->handler(ctx, request, response);
      if (self->hub_.metrics != nullptr)
        self->hub_.metrics->observe(self->hub_.first_metric + static_cast<std::size_t>(route - route_table().data()),
                                    std::chrono::steady_clock::now() - start);
      boost::asio::post(self->hub_.io, [self, response = std::move(response)]() mutable {
        if (self->closed_ || !self->offloaded_) return;  // gone, or answered by shutdown()
        self->offloaded_ = false;
        self->send(std::move(response));
      });
    });
    return;
  }
  RouteContext ctx{hub_.service, Caller{&principal_, id_}, this, hub_.view};
  auto start = std::chrono::steady_clock::now();
  Outcome outcome = route->handler(ctx, request, response);
  if (hub_.metrics != nullptr)
    hub_.metrics->observe(hub_.first_metric + static_cast<std::size_t>(route - route_table().data()),
                          std::chrono::steady_clock::now() - start);
  if (outcome == Outcome::kBlocked) {
    waiting_ = true;
    waiter_ = ctx.blocked_on;
    // The service keeps only a plain pointer to this session as the waiter's client, and the
    // disconnect watch ends once a client has pipelined more than it may: without this hold
    // nothing would keep the session alive until the outcome arrives.
    self_while_waiting_ = shared_from_this();
    stream_.expires_never();
    watch_for_disconnect();
  } else {
    send(std::move(response));
  }
  hub_.loop.after_event();
}

// While a request waits for a lock, a readable socket means either the client hung up (recv
// reads 0 bytes) or it pipelined another request. Pipelined bytes move into the parse buffer,
// where the next read() finds them, so that the socket can be watched again: the next
// readiness is then more data or the hang-up. A client that pipelines more than one request
// can hold is no longer watched (its hang-up then shows when the answer is written).
void Session::watch_for_disconnect() {
  stream_.socket().async_wait(boost::asio::ip::tcp::socket::wait_read,
                              [self = shared_from_this()](const boost::system::error_code& ec) {
                                if (!(self->waiting_ || self->offloaded_) || self->closed_) return;
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
  const ssize_t n = ::recv(stream_.socket().native_handle(), space.data(), space.size(), MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    close();
    return;
  }
  if (n > 0) buffer_.commit(static_cast<std::size_t>(n));
  if (buffer_.size() + kChunk <= hub_.header_limit + hub_.body_limit) watch_for_disconnect();
}

void Session::on_waiter_outcome(const WaiterOutcome& outcome) {
  const auto self = std::move(self_while_waiting_);  // lives to the end of this call
  if (closed_) return;
  waiting_ = false;
  waiter_ = 0;
  Response response;
  waiter_response(outcome, response);
  send(std::move(response));
}

void Session::send(Response r) {
  response_ = {};
  response_.version(11);
  response_.result(static_cast<unsigned>(r.status));
  response_.set(bhttp::field::server, "holdfast");
  if (!r.content_type.empty()) response_.set(bhttp::field::content_type, r.content_type);
  response_.keep_alive(keep_alive_ && !stopping_);
  if (!r.allow.empty()) response_.set(bhttp::field::allow, r.allow);
  for (const auto& [name, value] : cors::response_headers(hub_.cors, origin_))
    response_.set(name, value);
  for (const auto& [name, value] : r.headers) response_.set(name, value);
  response_.body() = std::move(r.body);
  response_.prepare_payload();
  if (head_) response_.body().clear();  // HEAD: GET's headers, Content-Length included, no body
  write_when_durable(hub_.service.last_sequence());
}

// The response may tell of changes made so far: it leaves once they are durable. The wait
// captures only the session (a callback holding a shared_ptr to itself would never be freed).
void Session::write_when_durable(std::uint64_t need) {
  if (hub_.service.durable_sequence() < need) {
    hub_.loop.wait_durable([self = shared_from_this(), need] { self->write_when_durable(need); });
    return;
  }
  write_now();
}

void Session::write_now() {
  if (closed_) return;
  stream_.expires_after(kIdleTimeout);
  bhttp::async_write(stream_, response_,
                     [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                       if (ec || !self->response_.keep_alive()) {
                         self->close();
                         return;
                       }
                       self->read();
                     });
}

void Session::shutdown() {
  stopping_ = true;
  if (waiting_ || offloaded_) {
    hub_.service.cancel_waiter(waiter_);
    waiting_ = false;
    offloaded_ = false;
    let_go_of_self();
    Response r;
    error_response(Error(ErrorCode::kUnavailable, "the server is shutting down"), r);
    send(std::move(r));
    return;
  }
  // Cancelling the pending read (or write) ends in close().
  boost::system::error_code ignored;
  stream_.socket().cancel(ignored);
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  if (waiting_) {
    hub_.service.cancel_waiter(waiter_);
    waiting_ = false;
    let_go_of_self();
  }
  if (hub_.offload != nullptr) {
    hub_.offload->submit([&service = hub_.service, id = id_] { service.end_session(id); });
  } else {
    hub_.service.end_session(id_);
  }
  hub_.live.erase(id_);
  boost::system::error_code ignored;
  stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
  hub_.loop.after_event();
}

// The waiter was cancelled: drop the session's hold on itself from the loop, not here, where
// the caller may still be using the session.
void Session::let_go_of_self() {
  if (self_while_waiting_) boost::asio::post(hub_.io, [self = std::move(self_while_waiting_)] {});
}

}  // namespace holdfast::http
