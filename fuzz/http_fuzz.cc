// Fuzzes the HTTP/JSON API's routes (docs/http.md) without sockets: requests go through the
// route table to an EmbeddedService over a MemoryStore, with a fake clock, from two callers.
// Any request must get a response with a status from 200 to 599 and, when it says JSON, a body
// that parses as JSON; an error's body must carry errorCode, message and details. No crash,
// no undefined behaviour, and a waiter's outcome only for a caller that waits.
//
// Input: requests separated by NUL bytes, each "METHOD TARGET\nBODY". Pseudo-requests steer
// the harness: "CONN n" (later requests come from caller n % 2), "TICK ms" (the clock moves
// on; lease ends and timeouts run), "CLOSE" (the caller's session ends and a new one starts).
// "$H" in a body or target stands for the last handle a response carried. With
// HOLDFAST_FUZZ_ECHO set, every response is printed.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/validation.h"
#include "server/embedded_service.h"
#include "server/http/routes.h"
#include "store/memory_store.h"

namespace {

using namespace holdfast;
using namespace holdfast::http;

struct HttpCaller final : WaiterClient {
  SessionId session = 0;
  bool blocked = false;
  WaiterId blocked_on = 0;
  std::optional<Response> outcome;

  void on_waiter_outcome(const WaiterOutcome& o) override {
    if (!blocked) std::abort();  // outcomes go only to callers that wait
    outcome.emplace();
    waiter_response(o, *outcome);
    blocked = false;
    blocked_on = 0;
  }
};

void check_response(const Response& r, std::string& last_handle) {
  static const bool echo = std::getenv("HOLDFAST_FUZZ_ECHO") != nullptr;
  if (echo) std::fprintf(stderr, "%d %s %s\n", r.status, r.content_type.c_str(), r.body.c_str());
  if (r.status < 200 || r.status > 599) std::abort();
  if (r.content_type != "application/json") return;
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(r.body, ec);
  if (ec) std::abort();  // a JSON response must be JSON
  if (r.status >= 400) {
    const auto* o = v.if_object();
    if (o == nullptr || !o->contains("errorCode") || !o->contains("message") ||
        !o->contains("details"))
      std::abort();
  }
  if (const auto* o = v.if_object()) {
    const boost::json::value* hold = o->if_contains("handle");
    if (hold != nullptr && hold->is_object()) hold = hold->as_object().if_contains("handle");
    if (hold != nullptr && hold->is_string()) last_handle = std::string(hold->as_string());
  }
}

std::string replace_handle(std::string_view text, const std::string& handle) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 2) == "$H") {
      out += handle;
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FakeClock clock;
  MemoryStore store;
  EmbeddedService service(clock, store);
  if (!service.recover().ok()) std::abort();
  const Principal owner = Principal::local_owner();
  ServerView view;
  view.metrics = [] { return std::string("# metrics\n"); };
  view.ready = [] { return true; };
  HttpCaller callers[2];
  SessionId last_session = 0;
  for (auto& c : callers) c.session = ++last_session;
  std::size_t current = 0;
  std::string last_handle;

  auto close = [&](HttpCaller& c) {
    if (c.blocked) service.cancel_waiter(c.blocked_on);
    c.blocked = false;
    service.end_session(c.session);
    c.session = ++last_session;
  };

  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const std::string_view one = rest.substr(0, rest.find('\0'));
    rest.remove_prefix(std::min(rest.size(), one.size() + 1));
    const std::string_view line = one.substr(0, one.find('\n'));
    const std::string body =
        replace_handle(line.size() < one.size() ? one.substr(line.size() + 1) : "", last_handle);
    const std::string_view method = line.substr(0, line.find(' '));
    const std::string target = replace_handle(
        method.size() < line.size() ? line.substr(method.size() + 1) : "", last_handle);
    HttpCaller& c = callers[current];
    if (method == "CONN") {
      current = parse_int64(target).value_or(0) == 1 ? 1 : 0;
    } else if (method == "TICK") {
      const std::int64_t ms = parse_int64(target).value_or(1);
      clock.advance(ms < 0 || ms > 86'400'000 ? 1 : ms);
      service.advance();
    } else if (method == "CLOSE") {
      close(c);
    } else if (!c.blocked) {
      const std::string_view t(target);
      const std::string_view path = t.substr(0, t.find('?'));
      const std::string_view query =
          path.size() < t.size() ? t.substr(path.size() + 1) : std::string_view();
      Request request{method, path, query, body};
      Response response;
      if (const Route* route = match_route(request.method, request.path, response)) {
        RouteContext ctx{service, holdfast::Caller{&owner, c.session}, &c, view};
        if (route->handler(ctx, request, response) == Outcome::kBlocked) {
          if (ctx.blocked_on == 0) std::abort();
          c.blocked = true;
          c.blocked_on = ctx.blocked_on;
        } else {
          check_response(response, last_handle);
        }
      } else {
        check_response(response, last_handle);
      }
    }
    service.dispatch_outcomes();
    for (auto& each : callers) {
      if (each.outcome) check_response(*each.outcome, last_handle);
      each.outcome.reset();
    }
  }
  for (auto& c : callers) close(c);
  service.dispatch_outcomes();
  return 0;
}
