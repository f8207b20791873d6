/* eval_json_request: decode the request, compile, bind, evaluate, encode. See json_eval.h. */
#include "cel/json_eval.h"

#include <boost/json.hpp>
#include <exception>

#include "cel/cel.h"
#include "cel/json_values.h"

namespace holdfast::cel {
namespace {

namespace json = boost::json;

// Deep enough for values nested well beyond any rule's needs (each CEL list or map level
// takes up to three JSON levels), shallow enough to keep the decoder's recursion small.
constexpr std::size_t kMaxJsonDepth = 200;

std::string error_reply(std::string_view message) {
  std::string out = "{\"error\": ";
  append_json_string(out, message);
  out += '}';
  return out;
}

std::string evaluate_request(std::string_view request) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  boost::system::error_code ec;
  const json::value doc = json::parse(json::string_view(request.data(), request.size()), ec,
                                      json::storage_ptr(), options);
  if (ec) return error_reply("malformed request: " + ec.message());
  const json::object* object = doc.if_object();
  if (object == nullptr) return error_reply("malformed request: expected a JSON object");
  const json::value* expr = object->if_contains("expr");
  if (expr == nullptr || !expr->is_string())
    return error_reply("malformed request: \"expr\" must be a string");

  Activation activation;
  if (const json::value* bindings = object->if_contains("bindings");
      bindings != nullptr && !bindings->is_null()) {
    if (!bindings->is_object())
      return error_reply("malformed request: \"bindings\" must be an object");
    for (const auto& binding : bindings->get_object()) {
      const std::string_view name(binding.key().data(), binding.key().size());
      auto value = value_from_typed_json(binding.value());
      if (!value.ok())
        return error_reply("binding '" + std::string(name) + "': " + value.error().message);
      activation.bind(name, std::move(value).value());
    }
  }

  const json::string& source = expr->get_string();
  auto program = compile(std::string_view(source.data(), source.size()));
  if (!program.ok()) return error_reply(program.error().message);
  auto result = program->evaluate(activation);
  if (!result.ok()) return error_reply(result.error().message);
  std::string out;
  append_typed_json(out, result.value());
  return out;
}

}  // namespace

std::string eval_json_request(std::string_view request) noexcept {
  try {
    return evaluate_request(request);
  } catch (const std::exception& e) {
    try {
      return error_reply(std::string("internal error: ") + e.what());
    } catch (...) {
      return {};  // out of memory while reporting; an empty reply is all that is left
    }
  } catch (...) {
    try {
      return error_reply("internal error");
    } catch (...) {
      return {};
    }
  }
}

}  // namespace holdfast::cel
