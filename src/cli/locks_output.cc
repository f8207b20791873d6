// JSON and human renderings for `holdfast locks` (see locks_output.h).
#include "cli/locks_output.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <optional>
#include <span>
#include <utility>

#include "cli/duration_flag.h"
#include "core/hold_fields.h"
#include "core/text.h"

namespace holdfast::cli {

std::string json_string(std::string_view s) {
  std::string out;
  append_json_quoted(out, s);
  return out;
}

namespace {

// Builds one JSON object, fields in the order added (the wire's order).
class JsonObject {
 public:
  JsonObject& str(std::string_view name, std::string_view value) {
    return raw(name, json_string(value));
  }
  JsonObject& opt_str(std::string_view name, const std::optional<std::string>& value) {
    return raw(name, value ? json_string(*value) : "null");
  }
  JsonObject& num(std::string_view name, std::int64_t value) {
    return raw(name, std::to_string(value));
  }
  JsonObject& time(std::string_view name, TimePoint at) {
    return num(name, at.time_since_epoch().count());
  }
  JsonObject& time(std::string_view name, const std::optional<TimePoint>& at) {
    return at ? time(name, *at) : raw(name, "null");
  }
  JsonObject& boolean(std::string_view name, bool value) {
    return raw(name, value ? "true" : "false");
  }
  JsonObject& raw(std::string_view name, std::string_view json) {
    text_ += text_.size() > 1 ? "," : "";
    text_ += json_string(name) + ":" + std::string(json);
    return *this;
  }
  std::string text() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

// Label/value lines with the values aligned.
class Fields {
 public:
  Fields& add(std::string label, std::string value) {
    rows_.emplace_back(std::move(label), std::move(value));
    return *this;
  }
  void print(std::ostream& out) const {
    std::size_t width = 0;
    for (const auto& [label, _] : rows_) width = std::max(width, label.size());
    for (const auto& [label, value] : rows_)
      out << label << std::string(width - label.size() + 2, ' ') << value << "\n";
  }

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

std::string or_dash(const std::optional<std::string>& s) { return s ? *s : "-"; }

// "exclusive", "shared", "semaphore 2 of 3" (the permits a hold takes of the key's).
template <typename Hold>
std::string mode_text(const Hold& h) {
  if (h.mode != LockMode::kSemaphore) return to_string(h.mode);
  return "semaphore " + std::to_string(h.take) + " of " + std::to_string(h.permits);
}

// The fields a hold of this mode shows after the others (as core/field_values.h picks them).
std::span<const HoldField> mode_fields(LockMode mode) {
  switch (mode) {
    case LockMode::kExclusive:
      return {};
    case LockMode::kShared:
      return kSharedFields;
    case LockMode::kSemaphore:
      return kSemaphoreFields;
  }
  return {};
}

// Rows as aligned columns, two spaces apart.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

std::string expires_text(const std::optional<TimePoint>& at, TimePoint now) {
  if (!at) return "never";
  return relative_time(*at, now) + " (" + iso_time(*at) + ")";
}

// A hold as the client library read it, seen as the server's field list sees a hold
// (core/hold_fields.h), so that --json names, orders and nulls fields as the wire does.
struct HoldFields {
  HoldFields(std::string_view key_, std::string_view held_by_, std::string_view scope_,
             std::string_view kind_)
      : key(key_), held_by(held_by_), scope(scope_), kind(kind_) {}

  std::string_view key, held_by, scope, kind;
  std::optional<std::string_view> handle, owner, holder;
  std::uint64_t token = 0;
  TimePoint acquired_at{};
  std::optional<TimePoint> lease_expires_at;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t permits = 0, take = 0;
  std::chrono::milliseconds lock_delay{0};

  static HoldFields of(const HoldInfo& h) {
    HoldFields f{h.key, h.held_by, to_string(h.scope), to_string(h.kind)};
    f.lock_delay = h.lock_delay;
    f.mode = h.mode;
    f.take = h.take;
    f.permits = h.permits;
    if (h.owner) f.owner = *h.owner;
    if (h.holder) f.holder = *h.holder;
    f.token = h.token;
    f.acquired_at = h.acquired_at;
    f.lease_expires_at = h.lease_expires_at;
    return f;
  }

  FieldValue value(HoldField field) const {
    using Type = FieldValue::Type;
    auto text = [](std::optional<std::string_view> v) {
      return v ? FieldValue{Type::kText, 0, *v} : FieldValue{};
    };
    auto time = [](std::optional<TimePoint> at) {
      return at ? FieldValue{Type::kTime, at->time_since_epoch().count(), {}} : FieldValue{};
    };
    switch (field) {
      case HoldField::kKey:
        return text(key);
      case HoldField::kHandle:
        return text(handle);
      case HoldField::kToken:
        return FieldValue{Type::kInteger, static_cast<std::int64_t>(token), {}};
      case HoldField::kHeldBy:
        return text(held_by);
      case HoldField::kOwner:
        return text(owner);
      case HoldField::kAcquiredAt:
        return time(acquired_at);
      case HoldField::kLeaseExpiresAt:
        return time(lease_expires_at);
      case HoldField::kScope:
        return text(scope);
      case HoldField::kKind:
        return text(kind);
      case HoldField::kHolder:
        return text(holder);
      case HoldField::kMode:
        return FieldValue{Type::kText, 0, to_string(mode)};
      case HoldField::kTake:
        return FieldValue{Type::kInteger, take, {}};
      case HoldField::kPermits:
        return FieldValue{Type::kInteger, permits, {}};
    }
    return FieldValue{};
  }
};

// A hold's lockDelayMs, when it has a lock-delay (the wire shows it only then).
void add_lock_delay(JsonObject& o, std::chrono::milliseconds delay) {
  if (delay.count() > 0) o.num("lockDelayMs", delay.count());
}

// Times as the wire has them: integer milliseconds since the Unix epoch. A shared or semaphore
// hold's mode fields, then its lockDelayMs, follow the others when `with_tail`, as on the wire.
void add_fields(JsonObject& o, std::span<const HoldField> fields, const HoldFields& h,
                bool with_tail = true) {
  auto add = [&](HoldField f) {
    const FieldValue v = h.value(f);
    switch (v.type) {
      case FieldValue::Type::kNull:
        o.raw(field_name(f), "null");
        break;
      case FieldValue::Type::kInteger:
      case FieldValue::Type::kTime:
        o.num(field_name(f), v.number);
        break;
      case FieldValue::Type::kText:
        o.str(field_name(f), v.text);
        break;
    }
  };
  for_each_field(fields, h.holder.has_value(), add);
  if (!with_tail) return;
  for (HoldField f : mode_fields(h.mode)) add(f);
  add_lock_delay(o, h.lock_delay);
}

std::string delay_text(std::chrono::milliseconds delay) {
  return std::to_string(delay.count()) + " ms";
}

// "k is free now", or closed by a lock-delay: why nobody holds a key that cannot be had.
std::string free_text(const LockStatus& s, TimePoint now) {
  if (!s.lock_delay_until) return s.key + " is free now";
  return s.key + " is closed by a lock-delay, opens " + relative_time(*s.lock_delay_until, now);
}

}  // namespace

TimePoint current_time() {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(Clock::now());
}

std::string who_holds(Client& client, const std::string& key, TimePoint now) {
  try {
    LockStatus s = client.status(key);
    if (!s.hold) return free_text(s, now);
    if (s.mode == LockMode::kSemaphore)
      return key + " is a semaphore of " + std::to_string(s.permits) + " permits, " +
             std::to_string(s.free_permits) + " free, " + std::to_string(s.holders.size()) +
             " holds, " + std::to_string(s.waiters) + " waiting";
    if (s.mode == LockMode::kShared)
      return key + " is held shared by " + std::to_string(s.holders.size()) + " holds, " +
             std::to_string(s.waiters) + " waiting";
    std::string text = key + " is held by " + s.hold->held_by;
    if (s.hold->owner) text += " (owner " + *s.hold->owner + ")";
    if (s.hold->lease_expires_at)
      text += ", expires " + relative_time(*s.hold->lease_expires_at, now);
    return text;
  } catch (const Error&) {
    return key + " is held";
  }
}

std::string who_holds(Client& client, const std::vector<KeyRequest>& keys, TimePoint now) {
  std::string text;
  for (const KeyRequest& k : keys)
    text += (text.empty() ? "" : "; ") + who_holds(client, k.key, now);
  return text;
}

void say_waiting(std::string_view who, Client& client, const std::vector<KeyRequest>& keys,
                 std::int64_t wait_ms, const RateLimitedError* limited) {
  const TimePoint now = current_time();
  const std::string why = limited != nullptr ? "over the acquire rate limit, a slot frees " +
                                                   relative_time(now + limited->retry_after(), now)
                                             : who_holds(client, keys, now);
  std::cerr << who << ": waiting up to " << duration_text(wait_ms) << ": " << why << std::endl;
}

std::string relative_time(TimePoint at, TimePoint now) {
  const std::int64_t ms = (at - now).count();
  const std::int64_t abs_ms = ms < 0 ? -ms : ms;
  const std::int64_t seconds = (abs_ms + 500) / 1000;
  if (seconds == 0) return "now";
  std::string amount;
  if (seconds < 120) {
    amount = std::to_string(seconds) + " s";
  } else if (seconds < 120 * 60) {
    amount = std::to_string((seconds + 30) / 60) + " min";
  } else if (seconds < 48 * 3600) {
    amount = std::to_string((seconds + 1800) / 3600) + " h";
  } else {
    amount = std::to_string((seconds + 43200) / 86400) + " d";
  }
  return ms > 0 ? "in " + amount : amount + " ago";
}

std::string iso_time(TimePoint at) {
  const std::int64_t ms = at.time_since_epoch().count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03dZ", static_cast<int>(ms % 1000));
  return std::string(buf) + frac;
}

std::string json_hold(const LockHandle& h) {
  HoldFields f{h.key, h.held_by, to_string(h.scope), to_string(HoldKind::kHandle)};
  f.handle = h.handle;
  if (h.owner) f.owner = *h.owner;
  f.token = h.token;
  f.acquired_at = h.acquired_at;
  f.lease_expires_at = h.lease_expires_at;
  f.mode = h.mode;
  f.take = h.take;
  f.permits = h.permits;
  f.lock_delay = h.lock_delay;
  JsonObject o;
  add_fields(o, kGrantFields, f);
  return o.text();
}

std::string json_group(const LockGroup& g) {
  std::string holds = "[";
  for (std::size_t i = 0; i < g.holds.size(); ++i) holds += (i ? "," : "") + json_hold(g.holds[i]);
  return JsonObject()
      .str("handle", g.handle)
      .time("leaseExpiresAt", g.lease_expires_at)
      .raw("holds", holds + "]")
      .text();
}

std::string json_hold_info(const HoldInfo& h) {
  JsonObject o;
  add_fields(o, kPublicFields, HoldFields::of(h));
  return o.text();
}

std::string json_status(const LockStatus& s) {
  JsonObject o;
  o.str("key", s.key).boolean("held", s.held());
  if (s.hold) {
    // The status fields, then waiters, then the holder of an assignment (the wire's order).
    HoldFields f = HoldFields::of(*s.hold);
    const auto holder = f.holder;
    f.holder.reset();
    add_fields(o, kStatusFields, f, false);
    o.num("waiters", s.waiters);
    if (holder) o.str("holder", *holder);
    add_lock_delay(o, s.hold->lock_delay);
    if (s.lock_delay_until) o.time("lockDelayUntil", *s.lock_delay_until);
    // A shared or semaphore key: its mode, permits and every hold (the wire's order).
    if (s.mode != LockMode::kExclusive) {
      o.str("mode", to_string(s.mode));
      if (s.mode == LockMode::kSemaphore) {
        o.num("permits", s.permits);
        o.num("freePermits", s.free_permits);
      }
      std::string holders = "[";
      for (std::size_t i = 0; i < s.holders.size(); ++i)
        holders += (i ? "," : "") + json_hold_info(s.holders[i]);
      o.raw("holders", holders + "]");
    }
  } else {
    o.num("waiters", s.waiters);
    if (s.lock_delay_until) o.time("lockDelayUntil", *s.lock_delay_until);
  }
  return o.text();
}

std::string json_list(const std::vector<HoldInfo>& holds, const std::string& next_cursor) {
  std::string array = "[";
  for (std::size_t i = 0; i < holds.size(); ++i) array += (i ? "," : "") + json_hold_info(holds[i]);
  return JsonObject().raw("locks", array + "]").str("nextCursor", next_cursor).text();
}

std::string json_renew(const RenewResult& r) {
  JsonObject o;
  o.boolean("renewed", r.renewed);
  if (r.renewed) {
    o.time("leaseExpiresAt", r.lease_expires_at);
  } else {
    o.str("reason", r.reason);
  }
  return o.text();
}

std::string json_release(const ReleaseResult& r) {
  JsonObject o;
  o.boolean("released", r.released);
  if (!r.released) o.str("reason", r.reason);
  return o.text();
}

std::string json_assignment(const Assignment& a) {
  HoldFields f{a.key, a.held_by, to_string(Scope::kLease), to_string(HoldKind::kAssigned)};
  f.holder = a.holder;
  f.token = a.token;
  f.acquired_at = a.acquired_at;
  f.lease_expires_at = a.lease_expires_at;
  f.lock_delay = a.lock_delay;
  JsonObject o;
  add_fields(o, kAssignmentFields, f);
  return o.text();
}

std::string json_transfer(const TransferResult& t) {
  return JsonObject()
      .str("holder", t.holder)
      .num("token", static_cast<std::int64_t>(t.token))
      .text();
}

std::string json_unassign(bool released) {
  return JsonObject().boolean("released", released).text();
}

std::string json_holder(const HolderInfo& h) {
  return JsonObject()
      .str("key", h.key)
      .opt_str("holder", h.holder)
      .boolean("held", h.held)
      .raw("token", h.held ? std::to_string(h.token) : "null")
      .time("acquiredAt", h.acquired_at)
      .time("leaseExpiresAt", h.lease_expires_at)
      .text();
}

std::string json_error(const Error& e) {
  JsonObject details;
  for (const auto& [name, value] : e.details()) {
    // Details travel as name=value text; the integer ones (timeoutMs, retryAfterMs) were
    // numbers on the server and are numbers here.
    const bool integer = !value.empty() && value.size() < 19 &&
                         value.find_first_not_of("0123456789") == std::string::npos;
    if (integer) {
      details.raw(name, value);
    } else {
      details.str(name, value);
    }
  }
  // what() starts with the code (the server's whole error line); the code has its own field.
  std::string_view message = e.what();
  if (message.starts_with(e.code() + " ")) message.remove_prefix(e.code().size() + 1);
  return JsonObject()
      .str("errorCode", e.code())
      .str("message", message)
      .raw("details", details.text())
      .text();
}

void print_hold(std::ostream& out, const LockHandle& h, TimePoint now) {
  Fields f;
  f.add("KEY", h.key)
      .add("HANDLE", h.handle)
      .add("TOKEN", std::to_string(h.token))
      .add("HELD BY", h.held_by)
      .add("OWNER", or_dash(h.owner))
      .add("SCOPE", to_string(h.scope));
  if (h.mode != LockMode::kExclusive) f.add("MODE", mode_text(h));
  if (h.lock_delay.count() > 0) f.add("LOCK DELAY", delay_text(h.lock_delay));
  f.add("EXPIRES", expires_text(h.lease_expires_at, now)).print(out);
}

void print_group(std::ostream& out, const LockGroup& g, TimePoint now) {
  Fields f;
  f.add("HANDLE", g.handle);
  if (!g.holds.empty()) {
    const LockHandle& first = g.holds.front();
    f.add("HELD BY", first.held_by).add("OWNER", or_dash(first.owner));
    f.add("SCOPE", to_string(first.scope));
  }
  f.add("EXPIRES", expires_text(g.lease_expires_at, now)).print(out);
  out << "\n";
  std::vector<std::vector<std::string>> rows = {{"KEY", "TOKEN", "MODE"}};
  for (const LockHandle& h : g.holds)
    rows.push_back({h.key, std::to_string(h.token), mode_text(h)});
  print_table(out, rows);
}

void print_status(std::ostream& out, const LockStatus& s, TimePoint now) {
  Fields f;
  f.add("KEY", s.key);
  if (!s.hold) {
    f.add("HELD", "no");
  } else {
    const HoldInfo& h = *s.hold;
    f.add("HELD", "yes").add("HELD BY", h.held_by).add("OWNER", or_dash(h.owner));
    if (h.holder) f.add("HOLDER", *h.holder);
    f.add("TOKEN", std::to_string(h.token))
        .add("SCOPE", to_string(h.scope))
        .add("KIND", to_string(h.kind))
        .add("ACQUIRED", relative_time(h.acquired_at, now) + " (" + iso_time(h.acquired_at) + ")")
        .add("EXPIRES", expires_text(h.lease_expires_at, now));
    if (h.lock_delay.count() > 0) f.add("LOCK DELAY", delay_text(h.lock_delay));
  }
  if (s.lock_delay_until)
    f.add("CLOSED", "by a lock-delay, opens " + relative_time(*s.lock_delay_until, now) + " (" +
                        iso_time(*s.lock_delay_until) + ")");
  f.add("WAITERS", std::to_string(s.waiters));
  if (s.mode == LockMode::kExclusive) {
    f.print(out);
    return;
  }
  // A shared or semaphore key: the newest hold above, then the key's mode and all its holds.
  f.add("MODE", to_string(s.mode)).add("HOLDERS", std::to_string(s.holders.size()));
  if (s.mode == LockMode::kSemaphore)
    f.add("PERMITS", std::to_string(s.free_permits) + " free of " + std::to_string(s.permits));
  f.print(out);
  out << "\n";
  print_list(out, s.holders, now);
}

void print_list(std::ostream& out, const std::vector<HoldInfo>& holds, TimePoint now) {
  if (holds.empty()) {
    out << "no locks held\n";
    return;
  }
  // A MODE column only when some hold is shared or a semaphore's.
  const bool modes = std::any_of(holds.begin(), holds.end(),
                                 [](const HoldInfo& h) { return h.mode != LockMode::kExclusive; });
  std::vector<std::vector<std::string>> rows = {
      {"KEY", "HELD BY", "OWNER", "TOKEN", "SCOPE", "KIND", "EXPIRES"}};
  if (modes) rows[0].push_back("MODE");
  for (const auto& h : holds) {
    std::string owner = h.holder ? "holder " + *h.holder : or_dash(h.owner);
    rows.push_back({h.key, h.held_by, owner, std::to_string(h.token), to_string(h.scope),
                    to_string(h.kind),
                    h.lease_expires_at ? relative_time(*h.lease_expires_at, now) : "never"});
    if (modes) rows.back().push_back(mode_text(h));
  }
  print_table(out, rows);
}

void print_assignment(std::ostream& out, const Assignment& a, TimePoint now) {
  Fields f;
  f.add("KEY", a.key)
      .add("HOLDER", a.holder)
      .add("TOKEN", std::to_string(a.token))
      .add("HELD BY", a.held_by)
      .add("EXPIRES", expires_text(a.lease_expires_at, now));
  if (a.lock_delay.count() > 0) f.add("LOCK DELAY", delay_text(a.lock_delay));
  f.print(out);
}

void print_holder(std::ostream& out, const HolderInfo& h, TimePoint now) {
  Fields f;
  f.add("KEY", h.key);
  if (!h.held) {
    f.add("HOLDER", "- (free)");
  } else if (!h.holder) {
    f.add("HOLDER", "- (held by a handle, not assigned)");
  } else {
    f.add("HOLDER", *h.holder);
  }
  if (h.held) f.add("TOKEN", std::to_string(h.token));
  if (h.held && h.acquired_at) f.add("ACQUIRED", relative_time(*h.acquired_at, now));
  if (h.held) f.add("EXPIRES", expires_text(h.lease_expires_at, now));
  f.print(out);
}

}  // namespace holdfast::cli
