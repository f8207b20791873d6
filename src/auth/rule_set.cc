#include "auth/rule_set.h"

#include <toml++/toml.h>

namespace holdfast {
namespace {

constexpr std::array<std::string_view, kLockOperationCount> kOperationNames = {
    "acquire", "renew", "assign", "transfer", "unassign"};

Error rules_error(const std::string& message) { return invalid_argument("rule set: " + message); }

}  // namespace

std::string_view operation_name(LockOperation op) {
  return kOperationNames[static_cast<std::size_t>(op)];
}

Result<RuleSet> parse_rule_set(std::string_view text) {
  toml::table doc;
  try {
    doc = toml::parse(text, std::string_view("rule set"));
  } catch (const toml::parse_error& e) {
    return rules_error(std::to_string(e.source().begin.line) + ":" +
                       std::to_string(e.source().begin.column) + ": " +
                       std::string(e.description()));
  }
  for (const auto& [k, v] : doc) {
    std::string key(k.str());
    if (key != "ruleSet" && key != "rules") return rules_error("unknown table [" + key + "]");
  }
  const toml::table* head = doc["ruleSet"].as_table();
  if (head == nullptr) return rules_error("[ruleSet] with name and resourceType is required");
  for (const auto& [k, v] : *head) {
    std::string key(k.str());
    if (key != "name" && key != "resourceType")
      return rules_error("unknown key '" + key + "' in [ruleSet]");
  }
  RuleSet set;
  set.toml = std::string(text);
  auto name = (*head)["name"].value<std::string>();
  if (!name || name->empty()) return rules_error("[ruleSet] name is required");
  for (char c : *name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return rules_error("[ruleSet] name may hold letters, digits, '-', '_' and '.' only");
  }
  if (name->size() > 128) return rules_error("[ruleSet] name is longer than 128 characters");
  set.name = *name;
  auto type = (*head)["resourceType"].value<std::string>();
  if (!type || *type != "lock") return rules_error("[ruleSet] resourceType must be \"lock\"");

  const toml::table* rules = doc["rules"].as_table();
  if (rules == nullptr) return rules_error("[rules.lock] is required");
  for (const auto& [k, v] : *rules) {
    if (k.str() != "lock") return rules_error("unknown table [rules." + std::string(k.str()) + "]");
  }
  const toml::table* lock = (*rules)["lock"].as_table();
  if (lock == nullptr)
    return rules_error("[rules.lock] must be a table of operation = \"CEL expression\"");
  for (const auto& [k, v] : *lock) {
    std::string op(k.str());
    std::size_t index = kOperationNames.size();
    for (std::size_t i = 0; i < kOperationNames.size(); ++i)
      if (kOperationNames[i] == op) index = i;
    if (index == kOperationNames.size()) {
      std::string why = (op == "release" || op == "status" || op == "list")
                            ? " (" + op + " is never gated by rules)"
                            : " (gated operations: acquire, renew, assign, transfer, unassign)";
      return rules_error("rules.lock." + op + " is not a gated operation" + why);
    }
    auto source = v.value<std::string>();
    if (!source || !v.is_string())
      return rules_error("rules.lock." + op + " must be a string holding a CEL expression");
    auto program = cel::compile(*source);
    if (!program.ok())
      return invalid_argument("rules.lock." + op + ": " + program.error().message).with("rule", op);
    set.rules[index] = std::move(*program);
  }
  return set;
}

cel::Activation rule_activation(const Principal& caller, std::string_view key,
                                const RuleRequest& request) {
  cel::Activation a;
  std::vector<std::pair<cel::Value, cel::Value>> user = {
      {cel::Value::from_string("userId"), cel::Value::from_string(caller.id)},
      {cel::Value::from_string("role"),
       cel::Value::from_string(std::string(role_name(caller.role)))},
  };
  std::vector<std::pair<cel::Value, cel::Value>> record = {
      {cel::Value::from_string("key"), cel::Value::from_string(std::string(key))},
  };
  std::vector<std::pair<cel::Value, cel::Value>> asked;
  auto put = [&asked](const char* name, std::optional<std::string_view> id) {
    if (id)
      asked.emplace_back(cel::Value::from_string(name), cel::Value::from_string(std::string(*id)));
  };
  put("operation", request.operation);
  put("mode", request.mode);
  for (const auto& [name, n] :
       {std::pair{"permits", request.permits}, std::pair{"take", request.take}})
    if (n) asked.emplace_back(cel::Value::from_string(name), cel::Value::from_int(*n));
  put("holderId", request.holder_id);
  put("toId", request.to_id);
  put("fromId", request.from_id);
  a.bind("user", *cel::Value::from_map(std::move(user)));
  a.bind("record", *cel::Value::from_map(std::move(record)));
  a.bind("request", *cel::Value::from_map(std::move(asked)));
  a.bind_function("isMemberOf", [&caller](std::span<const cel::Value> args) -> Result<cel::Value> {
    if (args.size() != 2 || args[0].kind() != cel::ValueKind::kString ||
        args[1].kind() != cel::ValueKind::kString)
      return invalid_argument("isMemberOf(type, id) takes two strings");
    return cel::Value::from_bool(caller.is_member_of(args[0].as_string(), args[1].as_string()));
  });
  return a;
}

std::optional<Error> check_access(const RuleSet* rules, const Principal& caller, LockOperation op,
                                  std::string_view key, const RuleRequest& request) {
  if (caller.is_privileged() || rules == nullptr) return std::nullopt;
  const auto& program = rules->rules[static_cast<std::size_t>(op)];
  Error denied(ErrorCode::kLockAccessDenied,
               "the lock rule set does not allow this " + std::string(operation_name(op)));
  denied.with("key", std::string(key));
  if (!program) return denied;
  cel::Activation activation = rule_activation(caller, key, request);
  auto value = program->evaluate(activation);
  if (!value.ok() || value->kind() != cel::ValueKind::kBool || !value->as_bool()) return denied;
  return std::nullopt;
}

}  // namespace holdfast
