// An HTTP request as a user makes it, with curl: the status, the body as sent, and the body
// parsed as JSON (null when it is not JSON). Shared by the black-box tests of the HTTP API.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace holdfast::testing {

struct HttpReply {
  int status = 0;
  boost::json::value body;
  std::string raw;
};

// Runs `curl -s -w '\n%{http_code}' ARGS` with `body` on its stdin (pass "--data-binary", "@-"
// in ARGS to send it): no argv size limit.
HttpReply curl_json(std::vector<std::string> args, const std::string& body = "");

}  // namespace holdfast::testing
