// Cross-origin resource sharing for the HTTP API, so that a web page served from an allowed
// origin can call Holdfast from the browser. A pure decision: given the configured origins and
// a request's CORS headers, which headers a response carries and how a preflight is answered.
//
//  1. With no allowed origins (the default) nothing here applies: no CORS header is sent and an
//     OPTIONS request is routed like any other (405).
//  2. A request whose Origin is allowed gets Access-Control-Allow-Origin (the origin itself, or
//     "*" when any origin is allowed) on every response, errors included, so the page can read
//     error bodies. Credentials travel as a bearer token, never as cookies, so
//     Access-Control-Allow-Credentials is never sent.
//  3. A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered here,
//     whatever the path: 204 with the methods and headers the API takes, or 403 naming what is
//     not allowed (the origin, a method, a header).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/routes.h"

namespace holdfast::http::cors {

struct Policy {
  // Exact origins ("https://app.example.com", scheme and host in lower case, port only when not
  // the scheme's default), or "*" for any origin. Empty: CORS is off.
  std::vector<std::string> allowed_origins;

  bool enabled() const { return !allowed_origins.empty(); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// The CORS headers of a response to a request that carried `origin` ("" when it had none).
Headers response_headers(const Policy& policy, std::string_view origin);

// The answer to a preflight, or nothing when the request is not one this policy answers (CORS
// off, not OPTIONS, or no Origin or Access-Control-Request-Method). The answer's own headers
// come on top of response_headers().
std::optional<Response> preflight(const Policy& policy, std::string_view method,
                                  std::string_view origin, std::string_view request_method,
                                  std::string_view request_headers);

// The refusal of a request that would change something (any method but GET, HEAD and
// OPTIONS) sent by a web page whose origin is not allowed, CORS on or off: a browser sends such
// a "simple" request (a form post, a text/plain fetch) without asking first, so without this a
// page from anywhere could take or free locks through a server on the reader's own machine.
// Requests without Origin (curl, client libraries) are not browser requests and pass.
std::optional<Response> cross_origin_refusal(const Policy& policy, std::string_view method,
                                             std::string_view origin);

// Checks one configured entry: "*" or an http(s) origin without path, query or trailing slash.
// Returns what is wrong with it, or nothing.
std::optional<std::string> origin_problem(std::string_view entry);

}  // namespace holdfast::http::cors
