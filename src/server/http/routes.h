// The HTTP/JSON API's routes (SPEC section 6): a table of method, path and handler, like the
// RESP command table. Handlers parse with BodyReader, call the LockService, and fill a Response;
// a blocking acquire or assign answers kBlocked and its response comes with the waiter's
// outcome (waiter_response()).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/lock_table.h"
#include "server/lock_service.h"

namespace holdfast::http {

struct Request {
  std::string_view method;
  std::string_view path;
  std::string_view query;  // without '?'
  std::string_view body;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // the Allow header of a 405: the methods the path takes
  std::vector<std::pair<std::string, std::string>> headers;  // more headers (a CORS preflight's)
};

// What routes may ask of the server beyond the LockService.
struct ServerView {
  std::function<std::string()> metrics;  // Prometheus text
  std::function<bool()> ready;           // serving and the store is usable
};

struct RouteContext {
  LockService& service;
  Caller caller;
  WaiterClient* client;
  const ServerView& server;
  WaiterId blocked_on = 0;  // set when a handler answers kBlocked
};

enum class Outcome { kDone, kBlocked };
using RouteHandler = Outcome (*)(RouteContext&, const Request&, Response&);

struct Route {
  std::string_view method;
  std::string_view path;    // exact, or a prefix ending in '/' when `prefix`
  bool prefix;
  bool open;                // no credentials needed (health, metrics)
  RouteHandler handler;
};

std::span<const Route> route_table();

// Finds the route; on a miss fills `response` with 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED
// (with `allow` set). HEAD finds the GET route: the caller sends its headers without the body.
const Route* match_route(std::string_view method, std::string_view path, Response& response);

// Renders an error with its HTTP status.
void error_response(const Error& error, Response& response);
// The response of a blocked acquire/assign once its waiter is decided.
void waiter_response(const WaiterOutcome& outcome, Response& response);

// Decodes one query parameter ("" if absent); percent-escapes and '+' are decoded.
std::optional<std::string> query_param(std::string_view query, std::string_view name);

}  // namespace holdfast::http
