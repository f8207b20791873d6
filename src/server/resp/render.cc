#include "server/resp/render.h"

#include <string>

#include "core/text.h"
#include "server/resp/commands.h"

namespace holdfast::resp {
namespace {

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      return true;
  return false;
}

void write_field(ReplyWriter& w, HoldField field, const HoldState& hold) {
  char handle[kHandleChars];
  const FieldValue v = field_value(field, hold, handle);
  switch (v.type) {
    case FieldValue::Type::kNull:
      w.null_field(field_name(field));
      break;
    case FieldValue::Type::kInteger:
    case FieldValue::Type::kTime:
      w.field(field_name(field), v.number);
      break;
    case FieldValue::Type::kText:
      w.field(field_name(field), v.text);
      break;
  }
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
        append_json_quoted(line, s);
      } else {
        line.append(s);
      }
    }
  }
  return line;
}

void write_error(ReplyWriter& w, const Error& error) { w.error_line(error_text(error)); }

void write_command_error(ReplyWriter& w, std::uint32_t command_flags, const Error& error) {
  if ((command_flags & kRedisErrors) != 0 && error.code == ErrorCode::kInvalidArgument) {
    w.error_line("ERR " + error.message);
  } else {
    write_error(w, error);
  }
}

void write_hold(ReplyWriter& w, std::span<const HoldField> fields, const HoldState& hold) {
  const auto extra = mode_fields(hold.mode);
  const bool delay = hold.lock_delay_ms > 0;  // docs/lock-kinds.md, "Lock-delay"
  w.map(field_count(fields, is_assigned(hold)) + extra.size() + (delay ? 1 : 0));
  for_each_field(fields, is_assigned(hold), [&](HoldField f) { write_field(w, f, hold); });
  for (HoldField f : extra) write_field(w, f, hold);
  if (delay) w.field("lockDelayMs", hold.lock_delay_ms);
}

void write_status(ReplyWriter& w, const StatusView& s) {
  // While a lock-delay keeps the key closed, lockDelayUntil comes last (docs/lock-kinds.md).
  const bool closed = s.lock_delay_until != 0;
  if (!s.held) {
    w.map(closed ? 4 : 3);
    w.field("key", s.key);
    w.field("held", 0);
    w.field("waiters", static_cast<std::int64_t>(s.waiters));
    if (closed) w.field("lockDelayUntil", s.lock_delay_until);
    return;
  }
  // A shared or semaphore key adds its mode, its permits and every hold after the fields of
  // its newest hold; an exclusive key's map is as it always was.
  const bool group = s.mode != LockMode::kExclusive;
  const std::size_t group_fields = !group ? 0 : s.mode == LockMode::kSemaphore ? 4 : 2;
  const bool delay = s.hold.lock_delay_ms > 0;
  w.map(3 + field_count(kStatusFields, is_assigned(s.hold)) + group_fields + (delay ? 1 : 0) +
        (closed ? 1 : 0));
  w.field("key", s.key);
  w.field("held", 1);
  std::size_t n = 0;
  for_each_field(kStatusFields, is_assigned(s.hold), [&](HoldField f) {
    // waiters goes before holder, where it always was.
    if (++n == std::size(kStatusFields) + 1)
      w.field("waiters", static_cast<std::int64_t>(s.waiters));
    write_field(w, f, s.hold);
  });
  if (n == std::size(kStatusFields)) w.field("waiters", static_cast<std::int64_t>(s.waiters));
  if (delay) w.field("lockDelayMs", s.hold.lock_delay_ms);
  if (closed) w.field("lockDelayUntil", s.lock_delay_until);
  if (!group) return;
  w.field("mode", mode_name(s.mode));
  if (s.mode == LockMode::kSemaphore) {
    w.field("permits", static_cast<std::int64_t>(s.permits));
    w.field("freePermits", static_cast<std::int64_t>(s.free_permits));
  }
  w.bulk("holders");
  w.array(s.holders.size());
  for (const HoldState& h : s.holders) write_hold(w, kPublicFields, h);
}

void write_holder(ReplyWriter& w, const HolderView& v) {
  w.map(6);
  w.field("key", v.key);
  if (v.holder) {
    w.field("holder", *v.holder);
  } else {
    w.null_field("holder");
  }
  w.field("held", v.held ? 1 : 0);
  if (v.held) {
    w.field("token", static_cast<std::int64_t>(v.token));
    w.field("acquiredAt", v.acquired_at);
    if (v.lease_expires_at == kNever) {
      w.null_field("leaseExpiresAt");
    } else {
      w.field("leaseExpiresAt", v.lease_expires_at);
    }
  } else {
    w.null_field("token");
    w.null_field("acquiredAt");
    w.null_field("leaseExpiresAt");
  }
}

}  // namespace holdfast::resp
