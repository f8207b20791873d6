// Fuzzes the HTTP session itself: real http::Session objects on an io_context, each talking
// to the fuzzer over a socket, in front of an EmbeddedService on a fake clock. http_fuzz checks
// the routes; this one checks what happens around them: requests that arrive in arbitrary
// pieces, requests pipelined behind a blocking acquire (which the session reads while it
// watches for a hang-up), responses that wait for the store to make them durable, slow readers,
// clients that hang up at any moment, malformed requests, HEAD, Connection: close, HTTP/1.0.
//
// The socket is one end of a Unix socket pair handed to the session as its TCP socket: the
// session only reads, writes, waits and shuts down, which behave alike on both, and a fuzzer
// that opened a TCP connection per client would soon run out of loopback ports.
//
// The steps of the input are those of socket_harness.h; the canned requests here are the lock
// routes on 4 keys, status of a fresh key (to see the order of responses), list, health,
// metrics, rule sets, errors and the ways a request can end the connection.
//
// When the harness has finished (every client has written everything and read until nothing
// more came, with the clock moved on and the store synced until nothing was outstanding):
//   - every client got exactly one well-formed response per request it sent, up to one that
//     ends the connection (Connection: close, HTTP/1.0, a malformed request), and nothing after;
//   - the status of a fresh key names that key: responses come back in the order of requests;
//   - a HEAD response has no body;
//   - once all clients hang up, no session object is left alive and no waiter is queued.
// http_session_offload_fuzz is the same with a service whose calls all take effect later, in
// any order (see socket_harness.h).
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/session.h"
#include "socket_harness.h"

namespace {

using namespace holdfast;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using fuzz::Client;

// The session's limits, set small: the disconnect watch behind a waiting acquire stops at one
// request's worth of pipelined bytes, and the fuzzer should get there often.
constexpr std::size_t kHeaderLimit = 2048;
constexpr std::size_t kBodyLimit = 4096;
constexpr std::string_view kStatusOf = "/v1/locks/status?key=s";

struct ExpectedResponse {
  std::optional<std::string> key;  // the status of this fresh key
  bool head = false;
};

struct Expected {
  std::vector<ExpectedResponse> responses;
  // Where Beast's verdict depends on how the bytes arrived (whole or in pieces), checking stops:
  //  - its header limit moves by up to a request line's length, so a request whose header ends
  //    within that margin of the limit, or is unfinished there, may be answered or refused;
  //  - once it has seen part of a request line, it waits for the end of the header before it
  //    looks again, so a bad request line without one may be refused or waited on.
  bool checking_stops = false;
};

// What the server owes a client for the bytes it sent, parsed as the session parses them.
Expected expected_responses(std::string_view sent) {
  Expected out;
  while (!sent.empty()) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    parser.eager(true);
    beast::error_code ec;
    std::size_t used = 0;
    while (!parser.is_done()) {
      used += parser.put(boost::asio::buffer(sent.data() + used, sent.size() - used), ec);
      if (ec == bhttp::error::need_more) {  // unfinished: not answered yet, unless the server
        // already found its header too long (see above: the margin of Beast's header limit)
        if (sent.find("\r\n\r\n") == std::string_view::npos && sent.size() + 8 > kHeaderLimit)
          out.checking_stops = true;
        return out;
      }
      if (ec) {
        const std::size_t end = sent.find("\r\n\r\n");
        if (ec != bhttp::error::header_limit &&
            (end == std::string_view::npos || end + 4 > kHeaderLimit)) {
          out.checking_stops = true;
          return out;
        }
        out.responses.push_back({});  // malformed: answered, then the connection closes
        return out;
      }
    }
    const std::size_t header = sent.find("\r\n\r\n") + 4, request_line = sent.find("\r\n") + 2;
    if (header + 8 > kHeaderLimit && header <= kHeaderLimit + request_line + 8) {
      out.checking_stops = true;
      return out;
    }
    const auto& req = parser.get();
    ExpectedResponse e;
    e.head = req.method() == bhttp::verb::head;
    const std::string_view target(req.target().data(), req.target().size());
    if (req.method() == bhttp::verb::get && target.substr(0, kStatusOf.size()) == kStatusOf)
      e.key = std::string(target.substr(kStatusOf.size() - 1));
    out.responses.push_back(e);
    if (!req.keep_alive()) return out;
    sent.remove_prefix(used);
  }
  return out;
}

std::string request(std::string_view method, std::string_view target, std::string_view body = {},
                    std::string_view extra_headers = {}) {
  std::string r = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: fuzz\r\n";
  r += extra_headers;
  if (!body.empty() || method == "POST" || method == "PUT")
    r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  r += "\r\n";
  r += body;
  return r;
}

// http_session_offload_fuzz builds this file with HOLDFAST_FUZZ_OFFLOAD: every call takes
// effect later, when the fuzzer says, as on a PostgreSQL node.
#ifdef HOLDFAST_FUZZ_OFFLOAD
constexpr bool kOffload = true;
#else
constexpr bool kOffload = false;
#endif

class Harness final : public fuzz::SocketHarness {
 public:
  Harness() : SocketHarness(kOffload) {
    view_.metrics = [] { return std::string("# fuzz\n"); };
    view_.not_ready = [] { return std::optional<Error>(); };
    cors_.allowed_origins = {"http://fuzz.example"};  // so preflights and CORS headers are reached
    hub_ = std::make_unique<http::HttpHub>(
        http::HttpHub{io_,
                      loop_,
                      http::Exchange::Env{front_service(), nullptr, view_, nullptr, 0, &cors_},
                      &last_session_,
                      {}});
    hub_->header_limit = kHeaderLimit;
    hub_->body_limit = kBodyLimit;
    connect_all();
  }

  ~Harness() override { hang_up_all(); }

 private:
  void attach(int server_fd) override {
    boost::asio::ip::tcp::socket socket(io_, boost::asio::ip::tcp::v4(), server_fd);
    auto session = std::make_shared<http::Session>(*hub_, std::move(socket));
    session->start();
    track(session);
  }

  std::string canned(std::uint8_t which, std::uint8_t arg) override {
    const std::string key = "\"key\":\"k" + std::to_string(arg % 4) + "\"";
    const std::string ttl = ",\"ttlMs\":" + std::to_string(50 + (arg >> 2) * 20);
    switch (which % 20) {
      case 0:
        return request("GET", std::string(kStatusOf) + std::to_string(++fresh_));
      case 1:
        return request("POST", "/v1/locks/try-acquire", "{" + key + ttl + "}");
      case 2:
        return request("POST", "/v1/locks/acquire",
                       "{" + key + ttl + ",\"timeoutMs\":" + std::to_string(arg * 8) + "}");
      case 3:
        return request("POST", "/v1/locks/release",
                       "{" + key + ",\"handle\":\"" + handle() + "\"}");
      case 4:
        return request("POST", "/v1/locks/renew",
                       "{" + key + ",\"handle\":\"" + handle() + "\"" + ttl + "}");
      case 5:
        return request("POST", "/v1/locks/assign",
                       "{" + key + ",\"holderId\":\"u" + std::to_string(arg % 2) +
                           "\",\"timeoutMs\":" + std::to_string(arg * 4) + "}");
      case 6:
        return request("POST", "/v1/locks/unassign", "{" + key + "}");
      case 7:
        return request("GET", "/v1/locks?count=" + std::to_string(1 + arg % 3));
      case 8:
        return request(arg % 2 ? "HEAD" : "GET", arg % 4 < 2 ? "/healthz" : "/metrics");
      case 9:
        return request("GET", std::string(kStatusOf) + std::to_string(++fresh_), {},
                       "Connection: close\r\n");
      case 10:
        return "GET /readyz HTTP/1.0\r\n\r\n";  // HTTP/1.0 without keep-alive: the last request
      case 11:
        return request("GET", "/v1/nothing");
      case 12:
        return request(arg % 2 ? "DELETE" : "HEAD", "/v1/locks/acquire");
      case 13:
        return request("POST", "/v1/locks/try-acquire", "{" + key);  // not JSON
      case 14:
        return "POST /v1/locks/acquire HTTP/1.1\r\nHost: fuzz\r\nContent-Length: 5000\r\n\r\n";  // 413
      case 15: {
        const std::string body = "{" + key + ttl + "}";
        char size[16];
        std::snprintf(size, sizeof size, "%zx", body.size());
        return request("POST", "/v1/locks/try-acquire", {}, "Transfer-Encoding: chunked\r\n") +
               size + "\r\n" + body + "\r\n0\r\n\r\n";
      }
      case 16:
        return request(
            "GET", std::string(kStatusOf) + std::to_string(++fresh_), {},
            "X-Padding: " + std::string(arg % 8 ? arg * 6 : 3000, 'y') + "\r\n");  // 3000: 431
      case 17:
        return request("GET", "/v1/locks/holder?key=k" + std::to_string(arg % 4));
      case 18:
        return request(
            "PUT", "/v1/rule-sets/p",
            "[ruleSet]\nname = \"p\"\nresourceType = \"lock\"\n[rules.lock]\nacquire = \"true\"\n");
      default:
        return request("DELETE", "/v1/rule-sets/p");
    }
  }

  bool none_live() const override { return hub_->live.empty(); }

  std::string handle() const { return last_handle("\"handle\":\""); }

  void check(const Client& c) override {
    const Expected expected = expected_responses(c.sent);
    if (echo_)
      std::fprintf(stderr, "client sent %zu bytes:\n%s\nowed %zu responses, got %zu bytes:\n%s\n",
                   c.sent.size(), c.sent.c_str(), expected.responses.size(), c.received.size(),
                   c.received.c_str());
    std::string_view got = c.received;
    for (const auto& e : expected.responses) {
      bhttp::response_parser<bhttp::string_body> parser;
      parser.eager(true);
      parser.body_limit(boost::none);
      parser.skip(e.head);  // a HEAD response has headers only, whatever Content-Length says
      beast::error_code ec;
      std::size_t used = 0;
      while (!parser.is_done()) {
        used += parser.put(boost::asio::buffer(got.data() + used, got.size() - used), ec);
        if (ec) std::abort();  // missing, cut short, or not HTTP
      }
      const auto& res = parser.get();
      if (e.key && res.body().find("\"key\":\"" + *e.key + "\"") == std::string::npos)
        std::abort();  // a response out of place
      got.remove_prefix(used);
    }
    // Bytes beyond the responses owed (a HEAD body, say).
    if (!got.empty() && !expected.checking_stops) std::abort();
  }

  const bool echo_ = std::getenv("HOLDFAST_FUZZ_ECHO") != nullptr;
  http::ServerView view_;
  http::cors::Policy cors_;
  std::unique_ptr<http::HttpHub> hub_;
  std::uint64_t fresh_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::SocketHarness::run<Harness>(data, size);
  return 0;
}
