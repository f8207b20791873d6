#include "server/resp/render.h"

#include <string>

namespace holdfast::resp {
namespace {

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return true;
  return false;
}

void append_json_string(std::string& out, std::string_view v) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : v) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

void write_optional(ReplyWriter& w, std::string_view name, std::string_view value) {
  if (value.empty()) {
    w.null_field(name);
  } else {
    w.field(name, value);
  }
}

void write_expiry(ReplyWriter& w, Millis at) {
  if (at == kNever) {
    w.null_field("leaseExpiresAt");
  } else {
    w.field("leaseExpiresAt", at);
  }
}

void write_hold_fields(ReplyWriter& w, const HoldState& h, bool with_handle) {
  const bool assigned = h.kind == HoldKind::kAssigned;
  w.map((with_handle ? 9 : 8) + (assigned ? 1 : 0));
  w.field("key", h.key);
  if (with_handle) {
    char handle[kHandleChars];
    if (!assigned) h.handle.write(handle);
    write_optional(w, "handle", assigned ? std::string_view() : std::string_view(handle, kHandleChars));
  }
  w.field("token", static_cast<std::int64_t>(h.token));
  w.field("heldBy", h.held_by);
  write_optional(w, "owner", h.owner);
  w.field("acquiredAt", h.acquired_at);
  write_expiry(w, h.lease_expires_at);
  w.field("scope", scope_name(h.scope));
  w.field("kind", kind_name(h.kind));
  if (assigned) w.field("holder", h.holder_id);
}

}  // namespace

std::string error_text(const Error& error) {
  std::string line(code_name(error.code));
  line.push_back(' ');
  line.append(error.message);
  for (const auto& [name, value] : error.details) {
    line.push_back(' ');
    line.append(name);
    line.push_back('=');
    if (const auto* n = std::get_if<std::int64_t>(&value)) {
      line.append(std::to_string(*n));
    } else {
      const auto& s = std::get<std::string>(value);
      if (needs_quotes(s)) {
        append_json_string(line, s);
      } else {
        line.append(s);
      }
    }
  }
  return line;
}

void write_error(ReplyWriter& w, const Error& error) { w.error_line(error_text(error)); }

void write_hold(ReplyWriter& w, const HoldState& hold) { write_hold_fields(w, hold, true); }

void write_public_hold(ReplyWriter& w, const HoldState& hold) { write_hold_fields(w, hold, false); }

void write_status(ReplyWriter& w, const StatusView& s) {
  if (!s.held) {
    w.map(3);
    w.field("key", s.key);
    w.field("held", 0);
    w.field("waiters", static_cast<std::int64_t>(s.waiters));
    return;
  }
  const HoldState& h = s.hold;
  const bool assigned = h.kind == HoldKind::kAssigned;
  w.map(10 + (assigned ? 1 : 0));
  w.field("key", s.key);
  w.field("held", 1);
  w.field("heldBy", h.held_by);
  write_optional(w, "owner", h.owner);
  w.field("acquiredAt", h.acquired_at);
  write_expiry(w, h.lease_expires_at);
  w.field("token", static_cast<std::int64_t>(h.token));
  w.field("scope", scope_name(h.scope));
  w.field("kind", kind_name(h.kind));
  w.field("waiters", static_cast<std::int64_t>(s.waiters));
  if (assigned) w.field("holder", h.holder_id);
}

void write_assignment(ReplyWriter& w, const HoldState& h) {
  w.map(6);
  w.field("key", h.key);
  w.field("holder", h.holder_id);
  w.field("token", static_cast<std::int64_t>(h.token));
  w.field("heldBy", h.held_by);
  w.field("acquiredAt", h.acquired_at);
  write_expiry(w, h.lease_expires_at);
}

void write_holder(ReplyWriter& w, const HolderView& v) {
  w.map(5);
  w.field("key", v.key);
  if (v.holder) {
    w.field("holder", *v.holder);
  } else {
    w.null_field("holder");
  }
  w.field("held", v.held ? 1 : 0);
  if (v.held) {
    w.field("acquiredAt", v.acquired_at);
    write_expiry(w, v.lease_expires_at);
  } else {
    w.null_field("acquiredAt");
    w.null_field("leaseExpiresAt");
  }
}

void write_lock_timeout(ReplyWriter& w, std::string_view key, Millis timeout_ms) {
  write_error(w, Error(ErrorCode::kLockTimeout, "no grant within the timeout")
                     .with("key", std::string(key))
                     .with("timeoutMs", timeout_ms));
}

}  // namespace holdfast::resp
