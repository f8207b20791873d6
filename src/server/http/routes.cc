#include "server/http/routes.h"

#include <boost/json.hpp>

#include "core/validation.h"
#include "auth/rule_set.h"
#include "server/http/json_body.h"

namespace holdfast::http {
namespace {

namespace json = boost::json;

void json_response(json::object body, Response& r, int status = 200) {
  r.status = status;
  r.content_type = "application/json";
  r.body = json::serialize(body);
}

Outcome fail(const Error& e, Response& r) {
  error_response(e, r);
  return Outcome::kDone;
}

// Reads the body with `read`, then checks for unknown fields; errors become a 400.
template <typename Fn>
std::optional<Error> read_body(const Request& req, Fn&& read) {
  auto body = BodyReader::parse(req.body);
  if (!body.ok()) return body.error();
  read(*body);
  return body->finish();
}

Outcome acquire_common(RouteContext& ctx, const Request& req, Response& res, bool blocking) {
  std::optional<std::string> key, owner;
  std::optional<std::int64_t> ttl, timeout;
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        ttl = b.integer("ttlMs", true);
        if (blocking) timeout = b.integer("timeoutMs", true);
        owner = b.string("owner", false);
      }))
    return fail(*err, res);
  AcquireArgs a;
  a.key = *key;
  a.ttl_ms = *ttl;
  a.timeout_ms = blocking ? *timeout : 0;
  if (owner) a.owner = *owner;
  auto out = ctx.service.acquire(ctx.caller, a, ctx.client);
  if (!out.ok()) return fail(out.error(), res);
  switch (out->kind) {
    case AcquireOutcome::Kind::kGranted:
      json_response({{"handle", hold_json(out->hold, true)}}, res);
      return Outcome::kDone;
    case AcquireOutcome::Kind::kContended:
      if (!blocking) {
        json_response({{"handle", nullptr}}, res);
        return Outcome::kDone;
      }
      return fail(Error(ErrorCode::kLockTimeout, "no grant within the timeout").with("key", *key).with("timeoutMs", 0), res);
    case AcquireOutcome::Kind::kQueued:
      ctx.blocked_on = out->waiter;
      return Outcome::kBlocked;
  }
  return Outcome::kDone;
}

Outcome acquire(RouteContext& ctx, const Request& req, Response& res) { return acquire_common(ctx, req, res, true); }
Outcome try_acquire(RouteContext& ctx, const Request& req, Response& res) {
  return acquire_common(ctx, req, res, false);
}

// Renew and release also take the hold object an acquire answered, as it is: it carries the
// key and the handle, and its other fields are accepted and ignored.
void accept_hold_fields(BodyReader& b) {
  for (const char* name :
       {"token", "heldBy", "owner", "acquiredAt", "leaseExpiresAt", "scope", "kind"})
    b.ignore(name);
}

Outcome renew(RouteContext& ctx, const Request& req, Response& res) {
  std::optional<std::string> key, handle;
  std::optional<std::int64_t> ttl;
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        handle = b.string("handle", true);
        ttl = b.integer("ttlMs", true);
        accept_hold_fields(b);
      }))
    return fail(*err, res);
  auto out = ctx.service.renew(ctx.caller, *key, *handle, *ttl);
  if (!out.ok()) return fail(out.error(), res);
  if (out->renewed) {
    json_response({{"renewed", true}, {"leaseExpiresAt", iso_time(out->lease_expires_at)}}, res);
  } else {
    json_response({{"renewed", false}, {"reason", "lease_lost"}}, res);
  }
  return Outcome::kDone;
}

Outcome release(RouteContext& ctx, const Request& req, Response& res) {
  std::optional<std::string> key, handle;
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        handle = b.string("handle", true);
        accept_hold_fields(b);
      }))
    return fail(*err, res);
  auto out = ctx.service.release(ctx.caller, *key, *handle);
  if (!out.ok()) return fail(out.error(), res);
  if (out->released) {
    json_response({{"released", true}}, res);
  } else {
    json_response({{"released", false}, {"reason", "not_holder"}}, res);
  }
  return Outcome::kDone;
}

std::optional<std::string> required_key(const Request& req, Response& res) {
  auto key = query_param(req.query, "key");
  if (!key) error_response(invalid_argument("key is required (?key=...)"), res);
  return key;
}

Outcome status(RouteContext& ctx, const Request& req, Response& res) {
  auto key = required_key(req, res);
  if (!key) return Outcome::kDone;
  auto out = ctx.service.status(ctx.caller, *key);
  if (!out.ok()) return fail(out.error(), res);
  json_response(status_json(*out), res);
  return Outcome::kDone;
}

Outcome list(RouteContext& ctx, const Request& req, Response& res) {
  std::string match = query_param(req.query, "match").value_or("");
  std::string cursor = query_param(req.query, "cursor").value_or("0");
  std::int64_t count = 100;
  if (auto c = query_param(req.query, "count")) {
    auto n = parse_int64(*c);
    if (!n || *n < 1) return fail(invalid_argument("count must be a positive integer"), res);
    count = std::min<std::int64_t>(*n, LockTable::kMaxListPage);
  }
  auto page = ctx.service.list(ctx.caller, match, cursor, static_cast<std::size_t>(count));
  if (!page.ok()) return fail(page.error(), res);
  json::array locks;
  for (const auto& h : page->holds) locks.push_back(hold_json(h, false));
  json_response({{"locks", std::move(locks)}, {"nextCursor", page->next_cursor}}, res);
  return Outcome::kDone;
}

Outcome assign(RouteContext& ctx, const Request& req, Response& res) {
  std::optional<std::string> key, holder;
  std::optional<std::int64_t> ttl, timeout;
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        holder = b.string("holderId", true);
        ttl = b.integer("ttlMs", false);
        timeout = b.integer("timeoutMs", false);
      }))
    return fail(*err, res);
  AssignArgs a;
  a.key = *key;
  a.holder_id = *holder;
  a.ttl_ms = ttl;
  a.timeout_ms = timeout;
  auto out = ctx.service.assign(ctx.caller, a, ctx.client);
  if (!out.ok()) return fail(out.error(), res);
  switch (out->kind) {
    case AcquireOutcome::Kind::kGranted:
      json_response(assignment_json(out->hold), res);
      return Outcome::kDone;
    case AcquireOutcome::Kind::kContended:
      return fail(Error(ErrorCode::kLockTimeout, "no grant within the timeout").with("key", *key).with("timeoutMs", 0), res);
    case AcquireOutcome::Kind::kQueued:
      ctx.blocked_on = out->waiter;
      return Outcome::kBlocked;
  }
  return Outcome::kDone;
}

Outcome transfer(RouteContext& ctx, const Request& req, Response& res) {
  std::optional<std::string> key, to, from;
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        to = b.string("toId", true);
        from = b.string("fromId", true);
      }))
    return fail(*err, res);
  auto out = ctx.service.transfer(ctx.caller, *key, *to, *from);
  if (!out.ok()) return fail(out.error(), res);
  json_response({{"holder", out->holder_id}, {"token", out->token}}, res);
  return Outcome::kDone;
}

Outcome unassign(RouteContext& ctx, const Request& req, Response& res) {
  std::optional<std::string> key, holder;
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        holder = b.string("holderId", false);
      }))
    return fail(*err, res);
  std::optional<std::string_view> h;
  if (holder) h = *holder;
  auto out = ctx.service.unassign(ctx.caller, *key, h);
  if (!out.ok()) return fail(out.error(), res);
  json_response({{"released", out->released}}, res);
  return Outcome::kDone;
}

Outcome holder(RouteContext& ctx, const Request& req, Response& res) {
  auto key = required_key(req, res);
  if (!key) return Outcome::kDone;
  auto out = ctx.service.holder(ctx.caller, *key);
  if (!out.ok()) return fail(out.error(), res);
  json_response(holder_json(*out), res);
  return Outcome::kDone;
}

std::string_view rule_set_name(const Request& req) {
  constexpr std::string_view prefix = "/v1/rule-sets/";
  return req.path.substr(prefix.size());
}

Outcome put_rule_set(RouteContext& ctx, const Request& req, Response& res) {
  // The path names the set; a TOML that names another one is refused before anything changes.
  auto parsed = parse_rule_set(req.body);
  if (parsed.ok() && parsed->name != rule_set_name(req)) {
    return fail(invalid_argument("the path names rule set '" + std::string(rule_set_name(req)) +
                                 "' but the TOML's [ruleSet] name is '" + parsed->name + "'"),
                res);
  }
  auto replaced = ctx.service.set_rule_set(ctx.caller, req.body);
  if (!replaced.ok()) return fail(replaced.error(), res);
  json_response({{"name", std::string(rule_set_name(req))}, {"replaced", *replaced}}, res);
  return Outcome::kDone;
}

Outcome get_rule_sets(RouteContext& ctx, const Request&, Response& res) {
  auto current = ctx.service.get_rule_set(ctx.caller);
  if (!current.ok()) return fail(current.error(), res);
  json::array sets;
  if (*current) sets.push_back(json::object{{"name", (**current).name}, {"toml", (**current).toml}});
  json_response({{"ruleSets", std::move(sets)}}, res);
  return Outcome::kDone;
}

Outcome delete_rule_set(RouteContext& ctx, const Request& req, Response& res) {
  auto st = ctx.service.delete_rule_set(ctx.caller, rule_set_name(req));
  if (!st.ok()) return fail(st.error(), res);
  json_response({{"deleted", true}}, res);
  return Outcome::kDone;
}

Outcome metrics(RouteContext& ctx, const Request&, Response& res) {
  res.status = 200;
  res.content_type = "text/plain; version=0.0.4; charset=utf-8";
  res.body = ctx.server.metrics();
  return Outcome::kDone;
}

Outcome healthz(RouteContext&, const Request&, Response& res) {
  json_response({{"status", "ok"}}, res);
  return Outcome::kDone;
}

Outcome readyz(RouteContext& ctx, const Request&, Response& res) {
  if (ctx.server.ready()) {
    json_response({{"status", "ready"}}, res);
  } else {
    error_response(Error(ErrorCode::kUnavailable, "the server is not ready (starting or shutting down)"), res);
  }
  return Outcome::kDone;
}

constexpr Route kRoutes[] = {
    {"POST", "/v1/locks/acquire", false, false, acquire},
    {"POST", "/v1/locks/try-acquire", false, false, try_acquire},
    {"POST", "/v1/locks/renew", false, false, renew},
    {"POST", "/v1/locks/release", false, false, release},
    {"GET", "/v1/locks/status", false, false, status},
    {"GET", "/v1/locks", false, false, list},
    {"POST", "/v1/locks/assign", false, false, assign},
    {"POST", "/v1/locks/transfer", false, false, transfer},
    {"POST", "/v1/locks/unassign", false, false, unassign},
    {"GET", "/v1/locks/holder", false, false, holder},
    {"PUT", "/v1/rule-sets/", true, false, put_rule_set},
    {"GET", "/v1/rule-sets", false, false, get_rule_sets},
    {"DELETE", "/v1/rule-sets/", true, false, delete_rule_set},
    {"GET", "/metrics", false, true, metrics},
    {"GET", "/healthz", false, true, healthz},
    {"GET", "/readyz", false, true, readyz},
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

std::span<const Route> route_table() { return kRoutes; }

const Route* match_route(std::string_view method, std::string_view path, Response& response) {
  const std::string_view wanted = method == "HEAD" ? std::string_view("GET") : method;
  std::string allow;
  for (const auto& r : kRoutes) {
    bool path_match = r.prefix ? path.substr(0, r.path.size()) == r.path && path.size() > r.path.size()
                               : path == r.path;
    if (!path_match) continue;
    if (wanted == r.method) return &r;
    if (!allow.empty()) allow += ", ";
    allow += r.method;
    if (r.method == "GET") allow += ", HEAD";
  }
  if (!allow.empty()) {
    error_response(Error(ErrorCode::kMethodNotAllowed, std::string(method) + " is not allowed on " + std::string(path)),
                   response);
    response.allow = std::move(allow);
  } else {
    error_response(Error(ErrorCode::kNotFound, "no route " + std::string(path)), response);
  }
  return nullptr;
}

void error_response(const Error& error, Response& response) {
  json_response(error_json(error), response, http_status(error.code));
}

void waiter_response(const WaiterOutcome& o, Response& response) {
  if (!o.granted) {
    error_response(Error(ErrorCode::kLockTimeout, "no grant within the timeout").with("key", o.key).with("timeoutMs", o.timeout_ms),
                   response);
  } else if (o.assign) {
    json_response(assignment_json(o.hold), response);
  } else {
    json_response({{"handle", hold_json(o.hold, true)}}, response);
  }
}

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    std::size_t eq = pair.find('=');
    if (percent_decode(pair.substr(0, eq)) == name)
      return eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace holdfast::http
