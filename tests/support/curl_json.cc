#include "support/curl_json.h"

#include <stdexcept>

#include "support/process.h"

namespace holdfast::testing {

HttpReply curl_json(std::vector<std::string> args, const std::string& body) {
  args.insert(args.begin(), {"curl", "-s", "-w", "\n%{http_code}"});
  const RunResult r = run(args, body);
  const auto nl = r.out.rfind('\n');
  if (nl == std::string::npos)
    throw std::runtime_error("curl printed no status (exit " + std::to_string(r.exit_code) +
                             "): " + r.err);
  HttpReply reply;
  reply.status = std::stoi(r.out.substr(nl + 1));
  reply.raw = r.out.substr(0, nl);
  boost::system::error_code ec;
  reply.body = boost::json::parse(reply.raw, ec);
  return reply;
}

}  // namespace holdfast::testing
