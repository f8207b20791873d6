// JSON for the HTTP API: strict request-body reading and the response shapes of
// docs/reference.md sections 5 and 6 (camelCase names, ISO-8601 UTC times with milliseconds).
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/field_values.h"
#include "core/lock_types.h"

namespace holdfast::http {

// Reads fields of a JSON object body. Every field read is remembered; finish() rejects the
// ones nobody asked for. The first error sticks and names its field.
class BodyReader {
 public:
  // The body must be one JSON object, naming no key twice at any depth.
  static Result<BodyReader> parse(std::string_view body);

  std::optional<std::string> string(const char* name, bool required);
  // A strict integer: 1000 yes, 1000.0 and "1000" no.
  std::optional<std::int64_t> integer(const char* name, bool required);
  // An array of JSON objects, each read by a reader of its own (at most `max` of them; more is
  // an error naming the field).
  std::optional<std::vector<BodyReader>> objects(const char* name, bool required, std::size_t max);
  // Accepts the field, whatever its value, without reading it.
  void ignore(std::string_view name) { seen_.insert(std::string(name)); }
  // Accepts the field, whatever its value, without reading it.
  void ignore(const char* name) { seen_.insert(name); }
  // Returns the error, if any, including unknown fields.
  std::optional<Error> finish();

 private:
  explicit BodyReader(boost::json::object object) : object_(std::move(object)) {}
  const boost::json::value* field(const char* name, bool required);
  void fail(const char* field, std::string message);

  boost::json::object object_;
  std::set<std::string, std::less<>> seen_;
  std::optional<Error> error_;
};

// "2026-11-30T12:58:43.913Z"; null for kNever.
boost::json::value iso_time(Millis at);

// A JSON object of `fields` of the hold (core/hold_fields.h), times as ISO-8601 strings.
boost::json::object hold_json(std::span<const HoldField> fields, const HoldState& hold);
boost::json::object status_json(const StatusView& status);
boost::json::object holder_json(const HolderView& view);
// {"errorCode": ..., "message": ..., "details": {...}}
boost::json::object error_json(const Error& error);
}  // namespace holdfast::http
