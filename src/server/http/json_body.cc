#include "server/http/json_body.h"

#include <ctime>

#include "core/text.h"
#include "server/http/json_strict.h"

namespace holdfast::http {

namespace json = boost::json;

Result<BodyReader> BodyReader::parse(std::string_view body) {
  Result<json::value> v = parse_json_strict(body);
  if (!v) return std::move(v).error();
  if (!v->is_object()) return invalid_argument("body must be a JSON object");
  return BodyReader(std::move(v->as_object()));
}

void BodyReader::fail(const char* field, std::string message) {
  if (!error_) error_ = invalid_argument(std::move(message)).with("field", std::string(field));
}

const json::value* BodyReader::field(const char* name, bool required) {
  seen_.insert(name);
  const json::value* v = object_.if_contains(name);
  if (v == nullptr || (v->is_null() && !required)) {
    if (required) fail(name, std::string(name) + " is required");
    return nullptr;
  }
  return v;
}

std::optional<std::string> BodyReader::string(const char* name, bool required) {
  const json::value* v = field(name, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    fail(name, std::string(name) + " must be a string");
    return std::nullopt;
  }
  return std::string(v->as_string());
}

std::optional<std::int64_t> BodyReader::integer(const char* name, bool required) {
  const json::value* v = field(name, required);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) {
    fail(name, std::string(name) + " is out of range");
  } else {
    fail(name, std::string(name) + " must be an integer number of milliseconds");
  }
  return std::nullopt;
}

std::optional<std::vector<BodyReader>> BodyReader::objects(const char* name, bool required,
                                                           std::size_t max) {
  const json::value* v = field(name, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    fail(name, std::string(name) + " must be an array of objects");
    return std::nullopt;
  }
  const json::array& items = v->as_array();
  if (items.empty() || items.size() > max) {
    fail(name, std::string(name) + " must have 1 to " + std::to_string(max) + " entries, not " +
                   std::to_string(items.size()));
    return std::nullopt;
  }
  std::vector<BodyReader> readers;
  readers.reserve(items.size());
  for (const json::value& item : items) {
    if (!item.is_object()) {
      fail(name, std::string(name) + " must be an array of objects");
      return std::nullopt;
    }
    readers.push_back(BodyReader(item.as_object()));
  }
  return readers;
}

std::optional<Error> BodyReader::finish() {
  if (!error_) {
    for (const auto& kv : object_) {
      if (!seen_.count(std::string_view(kv.key()))) {
        const std::string name(kv.key());
        fail(name.c_str(), "unknown field " + name);
        break;
      }
    }
  }
  return error_;
}

json::value iso_time(Millis at) {
  if (at == kNever) return nullptr;
  std::time_t secs = static_cast<std::time_t>(at / 1000);
  int ms = static_cast<int>(at % 1000);
  if (ms < 0) {
    ms += 1000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return json::string(buf);
}

json::object hold_json(std::span<const HoldField> fields, const HoldState& h) {
  json::object o;
  auto add = [&](HoldField f) {
    char handle[kHandleChars];
    const FieldValue v = field_value(f, h, handle);
    json::value& slot = o[field_name(f)];
    switch (v.type) {
      case FieldValue::Type::kNull:
        slot = nullptr;
        break;
      case FieldValue::Type::kInteger:
        slot = v.number;
        break;
      case FieldValue::Type::kText:
        slot = json::string(v.text);
        break;
      case FieldValue::Type::kTime:
        slot = iso_time(v.number);
        break;
    }
  };
  for_each_field(fields, is_assigned(h), add);
  for (HoldField f : mode_fields(h.mode)) add(f);  // shared and semaphore holds only
  if (h.lock_delay_ms > 0) o["lockDelayMs"] = h.lock_delay_ms;
  return o;
}

json::object status_json(const StatusView& s) {
  json::object o;
  o["key"] = s.key;
  o["held"] = s.held;
  if (s.held) {
    for (auto& field : hold_json(kStatusFields, s.hold)) o[field.key()] = std::move(field.value());
  }
  o["waiters"] = s.waiters;
  if (s.lock_delay_until != 0) o["lockDelayUntil"] = iso_time(s.lock_delay_until);  // lock-kinds.md
  if (s.held && s.mode != LockMode::kExclusive) {  // docs/lock-kinds.md
    o["mode"] = mode_name(s.mode);
    if (s.mode == LockMode::kSemaphore) {
      o["permits"] = s.permits;
      o["freePermits"] = s.free_permits;
    }
    json::array holders;
    for (const HoldState& h : s.holders) holders.push_back(hold_json(kPublicFields, h));
    o["holders"] = std::move(holders);
  }
  return o;
}

json::object holder_json(const HolderView& v) {
  json::object o;
  o["key"] = v.key;
  o["holder"] = v.holder ? json::value(*v.holder) : json::value(nullptr);
  o["held"] = v.held;
  o["token"] = v.held ? json::value(v.token) : json::value(nullptr);
  o["acquiredAt"] = v.held ? iso_time(v.acquired_at) : json::value(nullptr);
  o["leaseExpiresAt"] = v.held ? iso_time(v.lease_expires_at) : json::value(nullptr);
  return o;
}

json::object error_json(const Error& e) {
  // An error may quote what the client sent (a path, a key that failed validation), which
  // need not be UTF-8; the JSON must be.
  json::object details;
  for (const auto& [name, value] : e.details) {
    if (const auto* n = std::get_if<std::int64_t>(&value)) {
      details[name] = *n;
    } else {
      details[name] = valid_utf8(std::get<std::string>(value));
    }
  }
  json::object o;
  o["errorCode"] = code_name(e.code);
  o["message"] = valid_utf8(e.message);
  o["details"] = std::move(details);
  return o;
}

}  // namespace holdfast::http
