// The HTTP/JSON API's routes (docs/http.md): a table of method, path and handler, like the
// RESP command table. Two kinds of routes:
//  - local ones (metrics, health) answer at once from the server's view;
//  - lock routes are calls into the LockService: `call` reads the request strictly (every
//    body field and query parameter it does not take is a 400 naming it) and issues the call
//    (a bad request finishes the call at once with its error), `write` renders the answer;
//  - the event stream (`GET /v1/events`) reads its request and answers an EventStreamStart:
//    the session then streams lock events (event_stream.h) instead of sending one response.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/lock_service.h"

namespace holdfast::http {

// A request as the routes see it; the views stay valid until its response is written.
struct Request {
  std::string_view method;
  std::string_view path;
  std::string_view query;  // without '?'
  std::string_view body;
  // The headers the API reads ("" when absent).
  std::string_view authorization;
  std::string_view origin;                          // CORS
  std::string_view access_control_request_method;   // a CORS preflight's
  std::string_view access_control_request_headers;  // a CORS preflight's
  std::string_view last_event_id;                   // an event stream that resumes
  std::string_view if_none_match;                   // a page's file the browser has
};

// What a request for the event stream asks: keys starting with `prefix`, from after
// `last_event_id` (Last-Event-ID) if given.
struct EventStreamStart {
  std::string prefix;
  std::optional<std::uint64_t> last_event_id;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Allow on a 405, WWW-Authenticate on a 401, Retry-After on a 429...
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: not a response but the start of an event stream (the status and headers above are
  // its own).
  std::optional<EventStreamStart> stream;
};

// What routes may ask of the server beyond the LockService.
struct ServerView {
  std::function<std::string()> metrics;  // Prometheus text
  // Why the server is not ready (starting or stopping, or its store cannot take changes);
  // none: ready.
  std::function<std::optional<Error>()> not_ready;
};

using LocalRoute = void (*)(const ServerView& server, const Request& request, Response& response);
using CallRoute = Issued (*)(LockService& service, const Caller& caller, const Request& request,
                             Completion& done);
using RouteWriter = void (*)(const Request& request, Answer& answer, Response& response);
// Reads an event stream's request; the error answers it instead.
using StreamRoute = Result<EventStreamStart> (*)(const Request& request);

struct Route {
  std::string_view method;
  std::string_view path;  // exact, or a prefix ending in '/' when `prefix`
  bool prefix;
  bool open;  // no credentials needed (health, metrics)
  LocalRoute local;
  CallRoute call;
  RouteWriter write;
  // With `prefix`: what the path must end with; between the two is a parameter, at least
  // one byte ("/v1/locks/" K "/check").
  std::string_view suffix = {};
  StreamRoute stream = nullptr;  // the event stream
  // The `command` label of its metrics; empty: "METHOD path" (and "{key}suffix").
  std::string_view label = {};
};

std::span<const Route> route_table();

// The web page's files (ui_route.cc): GET /ui/ and /ui/<file>, and /ui redirected to /ui/.
void serve_ui(const ServerView& server, const Request& request, Response& response);
void redirect_to_ui(const ServerView& server, const Request& request, Response& response);

// Finds the route; on a miss fills `response` with 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED
// (with its Allow header). HEAD finds the GET route: the caller sends its headers without the
// body.
const Route* match_route(std::string_view method, std::string_view path, Response& response);

// Renders an error with its HTTP status and the headers its status calls for: Retry-After
// (whole seconds, rounded up) on a 429, WWW-Authenticate: Bearer on a 401.
void error_response(const Error& error, Response& response);
// The response of route `route` to its call's result.
void write_result(const Route& route, const Request& request, Result<Answer>& result,
                  Response& response);

}  // namespace holdfast::http
