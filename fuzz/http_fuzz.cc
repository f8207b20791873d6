// Fuzzes the HTTP/JSON API's routes (docs/http.md) without sockets: requests go through an
// Exchange (the route table and the call runner) to the policy over an embedded backend over a
// MemoryStore, with a fake clock, from two callers.
// Any request must get a response with a status from 200 to 599 and, when it says JSON, a body
// that parses as JSON; an error's body must carry errorCode, message and details. No crash,
// no undefined behaviour, a late response only for a caller that waits for one, and every call
// finished by the time its connection ends.
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
#include "server/http/exchange.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
#include "store/memory_store.h"

namespace {

using namespace holdfast;
using namespace holdfast::http;

// One caller: an exchange over one connection, and the request it has in flight. The request's
// strings live here until its response is ready.
struct HttpCaller final : Exchange::Events {
  HttpCaller(const Exchange::Env& env, SessionId id) : exchange(env, id, *this) {}
  void response_ready() override {
    if (!waiting) std::abort();  // a response only for a request that waits for one
    waiting = false;
    ready = true;
  }
  void keep_alive(bool) override {}

  Exchange exchange;
  std::string method, path, query, body;
  bool waiting = false;
  bool ready = false;
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
  EmbeddedBackend backend(clock, store);
  Policy service(backend, clock);
  if (!backend.recover().ok()) std::abort();
  ServerView view;
  view.metrics = [] { return std::string("# metrics\n"); };
  view.not_ready = [] { return std::optional<Error>(); };
  const Exchange::Env env{service, nullptr, view, nullptr, 0};
  SessionId last_session = 0;
  std::unique_ptr<HttpCaller> callers[2];
  for (auto& c : callers) c = std::make_unique<HttpCaller>(env, ++last_session);
  std::size_t current = 0;
  std::string last_handle;

  // What the loop does after each event: deliver what is ready, then check it.
  auto after_event = [&] {
    service.dispatch();
    for (auto& each : callers) {
      if (!each->ready) continue;
      each->ready = false;
      check_response(each->exchange.response(), last_handle);
    }
  };
  auto close = [&](std::unique_ptr<HttpCaller>& c) {
    c->exchange.end();
    service.dispatch();
    if (c->exchange.busy()) std::abort();  // every call finishes, also when its connection ends
    c = std::make_unique<HttpCaller>(env, ++last_session);
  };

  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const std::string_view one = rest.substr(0, rest.find('\0'));
    rest.remove_prefix(std::min(rest.size(), one.size() + 1));
    const std::string_view line = one.substr(0, one.find('\n'));
    std::string body =
        replace_handle(line.size() < one.size() ? one.substr(line.size() + 1) : "", last_handle);
    const std::string_view method = line.substr(0, line.find(' '));
    const std::string target = replace_handle(
        method.size() < line.size() ? line.substr(method.size() + 1) : "", last_handle);
    HttpCaller& c = *callers[current];
    if (method == "CONN") {
      current = parse_int64(target).value_or(0) == 1 ? 1 : 0;
    } else if (method == "TICK") {
      const std::int64_t ms = parse_int64(target).value_or(1);
      clock.advance(ms < 0 || ms > 86'400'000 ? 1 : ms);
      service.advance();
    } else if (method == "CLOSE") {
      close(callers[current]);
    } else if (!c.waiting) {
      const std::string_view t(target);
      c.method = std::string(method);
      c.path = std::string(t.substr(0, t.find('?')));
      c.query = c.path.size() < t.size() ? std::string(t.substr(c.path.size() + 1)) : "";
      c.body = std::move(body);
      // Fields by name: the headers the API reads stay empty, however many there are.
      Request request;
      request.method = c.method;
      request.path = c.path;
      request.query = c.query;
      request.body = c.body;
      if (c.exchange.handle(request)) {
        check_response(c.exchange.response(), last_handle);
      } else {
        c.waiting = true;
      }
    }
    after_event();
  }
  for (auto& c : callers) close(c);
  return 0;
}
