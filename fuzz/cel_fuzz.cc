/* libFuzzer target for the CEL engine (src/cel).
 *
 * Each input is an expression. It is compiled; if that succeeds it is evaluated against the
 * bindings a rule sees in the server (user, record, isMemberOf) plus a few values of the other
 * kinds, and the result is rendered with format_value. Beyond the sanitizers' checks, the
 * target asserts the engine's own invariants: every error message and every string result is
 * valid UTF-8, and a failed compile or evaluation always says where.
 */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cel/cel.h"
#include "cel/format.h"
#include "cel/utf8.h"

namespace {

using holdfast::Result;
using holdfast::cel::Activation;
using holdfast::cel::Value;
using holdfast::cel::ValueKind;

Value map_of(std::initializer_list<std::pair<const char*, Value>> fields) {
  std::vector<std::pair<Value, Value>> entries;
  for (const auto& [k, v] : fields) entries.emplace_back(Value::from_string(k), v);
  return Value::from_map(std::move(entries)).value();
}

Activation make_activation() {
  Activation activation;
  activation.bind("user", map_of({{"userId", Value::from_string("alice")},
                                  {"role", Value::from_string("member")}}));
  activation.bind("record", map_of({{"key", Value::from_string("user:alice:lock")}}));
  activation.bind("x", Value::from_int(-7));
  activation.bind("u", Value::from_uint(7));
  activation.bind("d", Value::from_double(2.5));
  activation.bind("s", Value::from_string("h\xC3\xA9llo"));
  activation.bind("b", Value::from_bytes(std::string("\x00\xff", 2)));
  activation.bind("l", Value::from_list({Value::from_int(1), Value::from_string("two"), Value()}));
  activation.bind_function("isMemberOf", [](std::span<const Value> args) -> Result<Value> {
    if (args.size() != 2) return holdfast::invalid_argument("isMemberOf takes two arguments");
    return Value::from_bool(args[0].is(ValueKind::kString) && args[0].as_string() == "ops");
  });
  return activation;
}

void check(bool invariant) {
  if (!invariant) std::abort();
}

void check_strings(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kString:
      check(holdfast::cel::is_valid_utf8(value.as_string()));
      break;
    case ValueKind::kList:
      for (const Value& item : value.as_list()) check_strings(item);
      break;
    case ValueKind::kMap:
      for (const auto& [k, v] : value.as_map().entries()) {
        check_strings(k);
        check_strings(v);
      }
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Activation activation = make_activation();
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  const auto program = holdfast::cel::compile(source);
  if (!program.ok()) {
    check(holdfast::cel::is_valid_utf8(program.error().message));
    return 0;
  }
  // Smaller budgets than the defaults keep each run short; the limits are what is under test.
  holdfast::cel::EvalLimits limits;
  limits.max_steps = 100'000;
  limits.max_bytes = 1 << 20;
  const auto result = program->evaluate(activation, limits);
  if (!result.ok()) {
    check(holdfast::cel::is_valid_utf8(result.error().message));
    check(!result.error().details.empty());  // the position
    return 0;
  }
  check_strings(result.value());
  check(holdfast::cel::is_valid_utf8(holdfast::cel::format_value(result.value())));
  return 0;
}
