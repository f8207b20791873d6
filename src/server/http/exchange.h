// Exchange: an HTTP connection's requests, one at a time, without the socket. The session
// (session.h) feeds it each parsed request and writes the response it makes; the HTTP fuzzer
// drives it the same way with no socket at all.
//
// handle() answers a CORS preflight (cors.h), routes the request, authenticates it
// (Authorization: Bearer, the scheme name in any case; without one, the caller a verified TLS
// client certificate named, if any), answers local routes at once and
// issues lock routes to the LockService through a CallRunner; the response is ready when
// handle() returns true, or later, when Events::response_ready() says so (a blocking acquire,
// a reply that waits for the log, a database round trip). Every response to an allowed origin
// carries its CORS headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/principal.h"
#include "server/call_runner.h"
#include "server/http/cors.h"
#include "server/http/routes.h"
#include "server/metrics.h"

namespace holdfast {
class Authenticator;
}

namespace holdfast::http {

class Exchange final : private CallRunner::Host {
 public:
  class Events {
   public:
    // The response of the request in flight is ready (handle() had returned false).
    virtual void response_ready() = 0;
    // A call is in flight (true) or not (false): stay alive while it is; let go from the loop.
    virtual void keep_alive(bool call_in_flight) = 0;

   protected:
    ~Events() = default;
  };

  struct Env {
    LockService& service;
    const Authenticator* auth = nullptr;  // null: local open mode
    const ServerView& view;
    Metrics* metrics = nullptr;
    std::size_t first_metric = 0;        // metric id of route 0; route i is first_metric + i
    const cors::Policy* cors = nullptr;  // null: CORS off
  };

  Exchange(const Env& env, SessionId id, Events& events);

  // Handles one request. Its views must stay valid until the response is ready. True:
  // response() is the answer now. REQUIRES: !busy().
  bool handle(const Request& request);
  bool busy() const { return runner_.in_flight(); }
  Response& response() { return response_; }
  // Who made the request just handled (an event stream watches as it).
  const Principal& principal() const { return principal_; }
  // The caller the connection's verified client certificate names (certCommonName): the caller
  // of its requests that carry no bearer token.
  void set_certificate_caller(std::optional<Principal> caller) {
    certificate_caller_ = std::move(caller);
  }
  // The connection is gone: its session ends in the service; a response still to come is
  // dropped.
  void end() { runner_.end(); }

 private:
  void answer(std::uint16_t command, Result<Answer> result) override;
  void release_local(std::size_t) override {}
  void resume() override {}
  void keep_alive(bool calls_in_flight) override { events_.keep_alive(calls_in_flight); }
  std::optional<Principal> authenticate(const Route& route, std::string_view authorization);
  // Adds the CORS headers the request's origin gets; true (the response is ready).
  bool ready();

  const Env& env_;
  Events& events_;
  CallRunner runner_;
  Principal principal_;
  std::optional<Principal> certificate_caller_;
  Request request_;
  std::string origin_;  // the request's Origin, kept for a response that comes later
  const Route* route_ = nullptr;
  Response response_;
  bool handling_ = false;
};

}  // namespace holdfast::http
