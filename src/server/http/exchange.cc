#include "server/http/exchange.h"

#include <chrono>

#include "auth/authenticator.h"

namespace holdfast::http {
namespace {

// "Bearer <token>", the scheme name in any case (RFC 7235); nullopt for anything else.
std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ')
    return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = authorization[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i])
      return std::nullopt;
  }
  std::string_view token = authorization.substr(kScheme.size() + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return token;
}

}  // namespace

Exchange::Exchange(const Env& env, SessionId id, Events& events)
    : env_(env), events_(events), runner_(env.service, *this, env.metrics, id) {}

std::optional<Principal> Exchange::authenticate(const Route& route,
                                                std::string_view authorization) {
  if (env_.auth == nullptr) return Principal::local_owner();
  if (route.open) return Principal{};
  // A bearer token wins over the certificate (a wrong one is refused, not passed over).
  if (authorization.empty()) return certificate_caller_;
  auto token = bearer_token(authorization);
  if (!token) return std::nullopt;
  return env_.auth->authenticate(std::nullopt, *token);
}

bool Exchange::ready() {
  if (env_.cors != nullptr)
    for (auto& header : cors::response_headers(*env_.cors, origin_))
      response_.headers.push_back(std::move(header));
  return true;
}

bool Exchange::handle(const Request& request) {
  response_ = Response{};
  request_ = request;
  origin_ = std::string(request.origin);
  if (env_.cors != nullptr) {
    if (auto answer = cors::preflight(*env_.cors, request.method, request.origin,
                                      request.access_control_request_method,
                                      request.access_control_request_headers)) {
      response_ = std::move(*answer);
      return ready();
    }
  }
  static const cors::Policy kNoOrigins;
  if (auto refused = cors::cross_origin_refusal(env_.cors != nullptr ? *env_.cors : kNoOrigins,
                                                request.method, request.origin)) {
    response_ = std::move(*refused);
    return ready();
  }
  route_ = match_route(request.method, request.path, response_);
  if (route_ == nullptr) return ready();
  auto who = authenticate(*route_, request.authorization);
  if (!who) {
    error_response(Error(ErrorCode::kUnauthenticated, "missing or unknown bearer token"),
                   response_);
    return ready();
  }
  principal_ = std::move(*who);
  if (route_->stream != nullptr) {
    Result<EventStreamStart> start = route_->stream(request_);
    if (!start.ok()) {
      error_response(start.error(), response_);
    } else {
      response_.content_type = "text/event-stream";
      response_.stream = std::move(*start);
    }
    return ready();
  }
  const auto metric =
      static_cast<std::uint16_t>(env_.first_metric + (route_ - route_table().data()));
  if (route_->local != nullptr) {
    const auto start = std::chrono::steady_clock::now();
    route_->local(env_.view, request_, response_);
    if (env_.metrics != nullptr)
      env_.metrics->observe(metric, std::chrono::steady_clock::now() - start);
    return ready();
  }
  handling_ = true;
  runner_.issue(metric, [&](LockService& service, Completion& done) {
    return route_->call(service, Caller{&principal_, runner_.session()}, request_, done);
  });
  handling_ = false;
  return !runner_.in_flight() && ready();
}

void Exchange::answer(std::uint16_t, Result<Answer> result) {
  write_result(*route_, request_, result, response_);
  if (!handling_) {
    ready();
    events_.response_ready();
  }
}

}  // namespace holdfast::http
