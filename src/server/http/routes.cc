#include "server/http/routes.h"

#include <boost/json.hpp>

#include "auth/rule_set.h"
#include "core/text.h"
#include "core/validation.h"
#include "server/events/event_bus.h"
#include "server/http/json_body.h"
#include "server/http/query.h"
#include "server/lock_mode_args.h"

namespace holdfast::http {
namespace {

namespace json = boost::json;

void json_response(json::object body, Response& r, int status = 200) {
  r.status = status;
  r.content_type = "application/json";
  r.body = json::serialize(body);
}

Issued refuse(Completion& done, Error error) {
  done.finish(std::move(error));
  return Issued::kApplied;
}

// Reads the body with `read`, then checks for unknown fields; errors become a 400.
template <typename Fn>
std::optional<Error> read_body(const Request& req, Fn&& read) {
  auto body = BodyReader::parse(req.body);
  if (!body.ok()) return body.error();
  read(*body);
  return body->finish();
}

// A route whose parameters are all in the body takes no query parameters.
std::optional<Error> no_query(const Request& req) { return QueryReader(req.query).finish(); }

// The body of acquire and try-acquire; every string it points into lives in `owned`.
struct AcquireBody {
  std::optional<std::string> key, owner, mode;
  std::optional<std::int64_t> ttl, timeout, permits, take, lock_delay;
  bool session = false;
};

std::optional<Error> read_acquire(const Request& req, bool blocking, AcquireBody& b) {
  if (auto err = no_query(req)) return err;
  return read_body(req, [&](BodyReader& r) {
    b.key = r.string("key", true);
    b.ttl = r.integer("ttlMs", true);
    if (blocking) b.timeout = r.integer("timeoutMs", true);
    b.owner = r.string("owner", false);
    b.mode = r.string("mode", false);
    b.permits = r.integer("permits", false);
    b.take = r.integer("take", false);
    b.lock_delay = r.integer("lockDelayMs", false);
  });
}

Result<AcquireArgs> acquire_args(const AcquireBody& b) {
  AcquireArgs a;
  a.key = *b.key;
  a.ttl_ms = *b.ttl;
  a.timeout_ms = b.timeout.value_or(0);
  if (b.owner) a.owner = *b.owner;
  a.lock_delay_ms = b.lock_delay;
  std::optional<std::string_view> mode;
  if (b.mode) mode = *b.mode;
  if (auto err = read_lock_mode(mode, b.permits, b.take, kJsonSpelling, a)) return *err;
  return a;
}

Issued acquire(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  AcquireBody b;
  if (auto err = read_acquire(req, true, b)) return refuse(done, *err);
  Result<AcquireArgs> args = acquire_args(b);
  if (!args) return refuse(done, std::move(args).error());
  return service.acquire(caller, *args, done);
}

Issued try_acquire(LockService& service, const Caller& caller, const Request& req,
                   Completion& done) {
  AcquireBody b;
  if (auto err = read_acquire(req, false, b)) return refuse(done, *err);
  Result<AcquireArgs> args = acquire_args(b);
  if (!args) return refuse(done, std::move(args).error());
  return service.try_acquire(caller, *args, done);
}

// The body of acquire-all and try-acquire-all (docs/http.md): keys, each with its mode, and
// the request's lease, wait and owner. Every string it points into lives in here.
struct AcquireAllBody {
  std::vector<AcquireBody> keys;
  std::optional<std::string> owner;
  std::optional<std::int64_t> ttl, timeout;
};

std::optional<Error> read_acquire_all(const Request& req, bool blocking, AcquireAllBody& b) {
  if (auto err = no_query(req)) return err;
  std::vector<BodyReader> entries;
  if (auto err = read_body(req, [&](BodyReader& r) {
        b.ttl = r.integer("ttlMs", true);
        if (blocking) b.timeout = r.integer("timeoutMs", true);
        b.owner = r.string("owner", false);
        if (auto keys = r.objects("keys", true, kMaxGroupKeys)) entries = std::move(*keys);
      }))
    return err;
  b.keys.resize(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    AcquireBody& k = b.keys[i];
    k.key = entries[i].string("key", true);
    k.mode = entries[i].string("mode", false);
    k.permits = entries[i].integer("permits", false);
    k.take = entries[i].integer("take", false);
    k.ttl = b.ttl;
    if (auto err = entries[i].finish()) return err->with("index", static_cast<std::int64_t>(i));
  }
  return std::nullopt;
}

Issued acquire_all_route(LockService& service, const Caller& caller, const Request& req,
                         Completion& done, bool blocking) {
  AcquireAllBody b;
  if (auto err = read_acquire_all(req, blocking, b)) return refuse(done, *err);
  AcquireAllArgs args;
  args.ttl_ms = *b.ttl;
  args.timeout_ms = b.timeout.value_or(0);
  if (b.owner) args.owner = *b.owner;
  for (const AcquireBody& k : b.keys) {
    Result<AcquireArgs> one = acquire_args(k);
    if (!one) return refuse(done, std::move(one).error().with("key", *k.key));
    args.keys.push_back(*one);
  }
  return blocking ? service.acquire_all(caller, args, done)
                  : service.try_acquire_all(caller, args, done);
}

Issued acquire_all(LockService& service, const Caller& caller, const Request& req,
                   Completion& done) {
  return acquire_all_route(service, caller, req, done, /*blocking=*/true);
}

Issued try_acquire_all(LockService& service, const Caller& caller, const Request& req,
                       Completion& done) {
  return acquire_all_route(service, caller, req, done, /*blocking=*/false);
}

// {"handle": "...", "leaseExpiresAt": ..., "holds": [one hold per key, as acquire answers]},
// or {"handle": null} for a try that did not get every key.
void write_group(const Request&, Answer& answer, Response& res) {
  const auto* group = std::get_if<GroupHold>(&answer);
  if (group == nullptr) {
    json_response({{"handle", nullptr}}, res);
    return;
  }
  boost::json::array holds;
  for (const HoldState& h : group->holds) holds.push_back(hold_json(kGrantFields, h));
  json_response({{"handle", group->handle.to_string()},
                 {"leaseExpiresAt", iso_time(group->lease_expires_at)},
                 {"holds", std::move(holds)}},
                res);
}

void write_grant(const Request&, Answer& answer, Response& res) {
  if (const auto* hold = std::get_if<HoldState>(&answer)) {
    json_response({{"handle", hold_json(kGrantFields, *hold)}}, res);
  } else {
    json_response({{"handle", nullptr}}, res);
  }
}

// Renew and release also take the hold object an acquire answered, as it is: it carries the
// key and the handle, and its other fields are accepted and ignored.
void accept_hold_fields(BodyReader& b) {
  for (HoldField f : kGrantFields)
    if (f != HoldField::kKey && f != HoldField::kHandle) b.ignore(field_name(f));
  b.ignore("lockDelayMs");
  for (HoldField f : kSemaphoreFields) b.ignore(field_name(f));  // a shared or semaphore hold's
}

Issued renew(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  std::optional<std::string> key, handle;
  std::optional<std::int64_t> ttl;
  if (auto err = no_query(req)) return refuse(done, *err);
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        handle = b.string("handle", true);
        ttl = b.integer("ttlMs", true);
        accept_hold_fields(b);
      }))
    return refuse(done, *err);
  return service.renew(caller, RenewArgs{*key, *handle, *ttl}, done);
}

void write_renewal(const Request&, Answer& answer, Response& res) {
  const auto& out = std::get<RenewOutcome>(answer);
  if (out.renewed) {
    json_response({{"renewed", true}, {"leaseExpiresAt", iso_time(out.lease_expires_at)}}, res);
  } else {
    json_response({{"renewed", false}, {"reason", "lease_lost"}}, res);
  }
}

Issued release(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  std::optional<std::string> key, handle;
  if (auto err = no_query(req)) return refuse(done, *err);
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        handle = b.string("handle", true);
        accept_hold_fields(b);
      }))
    return refuse(done, *err);
  return service.release(caller, ReleaseArgs{*key, *handle}, done);
}

void write_release(const Request&, Answer& answer, Response& res) {
  if (std::get<ReleaseOutcome>(answer).released) {
    json_response({{"released", true}}, res);
  } else {
    json_response({{"released", false}, {"reason", "not_holder"}}, res);
  }
}

// ?key=K and nothing else: status and holder.
template <Issued (LockService::*Call)(const Caller&, std::string_view, Completion&)>
Issued by_key(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  QueryReader query(req.query);
  auto key = query.get("key", true);
  if (auto err = query.finish()) return refuse(done, *err);
  if (!req.body.empty()) return refuse(done, invalid_argument("this route takes no body"));
  return (service.*Call)(caller, *key, done);
}

void write_status(const Request&, Answer& answer, Response& res) {
  json_response(status_json(std::get<StatusView>(answer)), res);
}

Issued list(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  QueryReader query(req.query);
  auto match = query.get("match");
  auto cursor = query.get("cursor");
  auto count = query.get("count");
  if (auto err = query.finish()) return refuse(done, *err);
  ListArgs a;
  if (match) a.match = *match;
  if (cursor) a.cursor = *cursor;
  if (count) {
    auto n = parse_int64(*count);
    if (!n || *n < 1)
      return refuse(done,
                    invalid_argument("count must be a positive integer").with("field", "count"));
    a.count = static_cast<std::size_t>(*n);
  }
  return service.list(caller, a, done);
}

void write_list(const Request&, Answer& answer, Response& res) {
  const auto& page = std::get<ListPage>(answer);
  json::array locks;
  for (const auto& h : page.holds) locks.push_back(hold_json(kPublicFields, h));
  json_response({{"locks", std::move(locks)}, {"nextCursor", page.next_cursor}}, res);
}

Issued assign(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  std::optional<std::string> key, holder;
  std::optional<std::int64_t> ttl, timeout, lock_delay;
  if (auto err = no_query(req)) return refuse(done, *err);
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        holder = b.string("holderId", false);
        ttl = b.integer("ttlMs", false);
        timeout = b.integer("timeoutMs", false);
        lock_delay = b.integer("lockDelayMs", false);
      }))
    return refuse(done, *err);
  AssignArgs a;
  a.key = *key;
  if (holder) a.holder_id = *holder;
  a.ttl_ms = ttl;
  a.timeout_ms = timeout;
  a.lock_delay_ms = lock_delay;
  return service.assign(caller, a, done);
}

void write_assignment(const Request&, Answer& answer, Response& res) {
  json_response(hold_json(kAssignmentFields, std::get<HoldState>(answer)), res);
}

Issued transfer(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  std::optional<std::string> key, to, from;
  if (auto err = no_query(req)) return refuse(done, *err);
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        to = b.string("toId", true);
        from = b.string("fromId", false);
      }))
    return refuse(done, *err);
  TransferArgs a{*key, *to, std::nullopt};
  if (from) a.from_id = *from;
  return service.transfer(caller, a, done);
}

void write_transfer(const Request&, Answer& answer, Response& res) {
  const auto& h = std::get<HoldState>(answer);
  json_response({{"holder", h.holder_id}, {"token", h.token}}, res);
}

Issued unassign(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  std::optional<std::string> key, holder;
  if (auto err = no_query(req)) return refuse(done, *err);
  if (auto err = read_body(req, [&](BodyReader& b) {
        key = b.string("key", true);
        holder = b.string("holderId", false);
      }))
    return refuse(done, *err);
  UnassignArgs a;
  a.key = *key;
  if (holder) a.holder_id = *holder;
  return service.unassign(caller, a, done);
}

void write_unassign(const Request&, Answer& answer, Response& res) {
  json_response({{"released", std::get<ReleaseOutcome>(answer).released}}, res);
}

void write_holder(const Request&, Answer& answer, Response& res) {
  json_response(holder_json(std::get<HolderView>(answer)), res);
}

constexpr std::string_view kLocksPrefix = "/v1/locks/";
constexpr std::string_view kCheckSuffix = "/check";

// GET /v1/locks/{key}/check?holderId=H: the key is percent-encoded in the path ('+' is a
// plus there); holderId may be left out with credentials (the caller's own).
Issued check(LockService& service, const Caller& caller, const Request& req, Completion& done) {
  const std::string key =
      percent_decode(req.path.substr(kLocksPrefix.size(),
                                     req.path.size() - kLocksPrefix.size() - kCheckSuffix.size()),
                     /*plus_is_space=*/false);
  QueryReader query(req.query);
  auto holder = query.get("holderId");
  if (auto err = query.finish()) return refuse(done, *err);
  if (!req.body.empty()) return refuse(done, invalid_argument("this route takes no body"));
  CheckArgs a;
  a.key = key;
  if (holder) a.holder_id = *holder;
  return service.check(caller, a, done);
}

constexpr std::string_view kRuleSetsPrefix = "/v1/rule-sets/";

std::string_view rule_set_name(const Request& req) {
  return req.path.substr(kRuleSetsPrefix.size());
}

Issued put_rule_set(LockService& service, const Caller& caller, const Request& req,
                    Completion& done) {
  if (auto err = no_query(req)) return refuse(done, *err);
  // The path names the set; a TOML that names another one is refused before anything changes.
  auto parsed = parse_rule_set(req.body);
  if (parsed.ok() && parsed->name != rule_set_name(req)) {
    return refuse(done,
                  invalid_argument("the path names rule set '" + std::string(rule_set_name(req)) +
                                   "' but the TOML's [ruleSet] name is '" + parsed->name + "'"));
  }
  return service.set_rule_set(caller, req.body, done);
}

void write_put_rule_set(const Request&, Answer& answer, Response& res) {
  const auto& stored = std::get<RuleSetStored>(answer);
  json_response({{"name", stored.name}, {"replaced", stored.replaced}}, res);
}

Issued get_rule_set(LockService& service, const Caller& caller, const Request& req,
                    Completion& done) {
  if (auto err = no_query(req)) return refuse(done, *err);
  return service.get_rule_set(caller, done);
}

json::object rule_set_json(const RuleSetPut& set) {
  return json::object{{"name", set.name}, {"toml", set.toml}};
}

void write_rule_sets(const Request&, Answer& answer, Response& res) {
  const auto& current = std::get<std::optional<RuleSetPut>>(answer);
  json::array sets;
  if (current) sets.push_back(rule_set_json(*current));
  json_response({{"ruleSets", std::move(sets)}}, res);
}

void write_named_rule_set(const Request& req, Answer& answer, Response& res) {
  const auto& current = std::get<std::optional<RuleSetPut>>(answer);
  if (!current || current->name != rule_set_name(req)) {
    error_response(Error(ErrorCode::kNotFound,
                         "no rule set named " + std::string(rule_set_name(req)) + " is installed"),
                   res);
    return;
  }
  json_response(rule_set_json(*current), res);
}

Issued delete_rule_set(LockService& service, const Caller& caller, const Request& req,
                       Completion& done) {
  if (auto err = no_query(req)) return refuse(done, *err);
  return service.delete_rule_set(caller, rule_set_name(req), done);
}

void write_deleted(const Request&, Answer&, Response& res) {
  json_response({{"deleted", true}}, res);
}

void metrics(const ServerView& server, const Request&, Response& res) {
  res.status = 200;
  res.content_type = "text/plain; version=0.0.4; charset=utf-8";
  res.body = server.metrics();
}

void healthz(const ServerView&, const Request&, Response& res) {
  json_response({{"status", "ok"}}, res);
}

void readyz(const ServerView& server, const Request&, Response& res) {
  if (std::optional<Error> why = server.not_ready()) {
    error_response(*why, res);
  } else {
    json_response({{"status", "ready"}}, res);
  }
}

// GET /v1/events[?prefix=P]: a Last-Event-ID that is not a number the server gave can only be
// answered with `reset`, which 0 gets.
Result<EventStreamStart> event_stream(const Request& req) {
  QueryReader query(req.query);
  auto prefix = query.get("prefix");
  if (auto err = query.finish()) return *err;
  if (!req.body.empty()) return invalid_argument("this route takes no body");
  EventStreamStart start;
  if (prefix) {
    if (auto err = events::check_prefix(*prefix)) return *err;
    start.prefix = std::move(*prefix);
  }
  if (!req.last_event_id.empty()) {
    const auto id = parse_int64(req.last_event_id);
    start.last_event_id = id && *id > 0 ? static_cast<std::uint64_t>(*id) : 0;
  }
  return start;
}

constexpr Route kRoutes[] = {
    {"POST", "/v1/locks/acquire", false, false, nullptr, acquire, write_grant},
    {"POST", "/v1/locks/try-acquire", false, false, nullptr, try_acquire, write_grant},
    {"POST", "/v1/locks/acquire-all", false, false, nullptr, acquire_all, write_group},
    {"POST", "/v1/locks/try-acquire-all", false, false, nullptr, try_acquire_all, write_group},
    {"POST", "/v1/locks/renew", false, false, nullptr, renew, write_renewal},
    {"POST", "/v1/locks/release", false, false, nullptr, release, write_release},
    {"GET", "/v1/locks/status", false, false, nullptr, by_key<&LockService::status>, write_status},
    {"GET", "/v1/locks", false, false, nullptr, list, write_list},
    {"POST", "/v1/locks/assign", false, false, nullptr, assign, write_assignment},
    {"POST", "/v1/locks/transfer", false, false, nullptr, transfer, write_transfer},
    {"POST", "/v1/locks/unassign", false, false, nullptr, unassign, write_unassign},
    {"GET", "/v1/locks/holder", false, false, nullptr, by_key<&LockService::holder>, write_holder},
    {"GET", kLocksPrefix, true, false, nullptr, check, write_holder, kCheckSuffix},
    {"PUT", "/v1/rule-sets/", true, false, nullptr, put_rule_set, write_put_rule_set},
    {"GET", "/v1/rule-sets/", true, false, nullptr, get_rule_set, write_named_rule_set},
    {"DELETE", "/v1/rule-sets/", true, false, nullptr, delete_rule_set, write_deleted},
    {"GET", "/v1/rule-sets", false, false, nullptr, get_rule_set, write_rule_sets},
    {"GET", "/metrics", false, true, metrics, nullptr, nullptr},
    {"GET", "/healthz", false, true, healthz, nullptr, nullptr},
    {"GET", "/readyz", false, true, readyz, nullptr, nullptr},
    {"GET", "/v1/events", false, false, nullptr, nullptr, nullptr, {}, event_stream},
    // The web page (docs/events.md): its files need no credentials; the page asks for a token
    // and sends it with its requests.
    {"GET", "/ui", false, true, redirect_to_ui, nullptr, nullptr},
    {"GET", "/ui/", false, true, serve_ui, nullptr, nullptr},
    {"GET", "/ui/", true, true, serve_ui, nullptr, nullptr, {}, nullptr, "GET /ui/{file}"},
};

// Whole seconds for Retry-After, rounded up (a client must not come back early).
std::string retry_after_seconds(const Error& error) {
  for (const auto& [name, value] : error.details) {
    if (name != "retryAfterMs") continue;
    const std::int64_t ms = std::get<std::int64_t>(value);
    return std::to_string(ms <= 0 ? 1 : (ms + 999) / 1000);
  }
  return "1";
}

}  // namespace

std::span<const Route> route_table() { return kRoutes; }

const Route* match_route(std::string_view method, std::string_view path, Response& response) {
  const std::string_view wanted = method == "HEAD" ? std::string_view("GET") : method;
  std::string allow;
  for (const auto& r : kRoutes) {
    const bool path_match = r.prefix ? path.starts_with(r.path) && path.ends_with(r.suffix) &&
                                           path.size() > r.path.size() + r.suffix.size()
                                     : path == r.path;
    if (!path_match) continue;
    if (wanted == r.method) return &r;
    if (!allow.empty()) allow += ", ";
    allow += r.method;
    if (r.method == "GET") allow += ", HEAD";
  }
  if (!allow.empty()) {
    error_response(Error(ErrorCode::kMethodNotAllowed,
                         std::string(method) + " is not allowed on " + std::string(path)),
                   response);
    response.headers.emplace_back("Allow", std::move(allow));
  } else {
    error_response(Error(ErrorCode::kNotFound, "no route " + std::string(path)), response);
  }
  return nullptr;
}

void error_response(const Error& error, Response& response) {
  json_response(error_json(error), response, http_status(error.code));
  if (error.code == ErrorCode::kRateLimited || error.code == ErrorCode::kStoreUnavailable) {
    response.headers.emplace_back("Retry-After", retry_after_seconds(error));
  } else if (error.code == ErrorCode::kUnauthenticated) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"holdfast\"");
  }
}

void write_result(const Route& route, const Request& request, Result<Answer>& result,
                  Response& response) {
  if (!result.ok()) {
    error_response(result.error(), response);
  } else {
    route.write(request, *result, response);
  }
}

}  // namespace holdfast::http
