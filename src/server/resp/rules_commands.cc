// RULES.* commands: the lock rule set over RESP.
#include "server/resp/commands.h"

namespace holdfast::resp {

Issued call_rules_set(LockService& service, const Caller& caller, const CallArgs& a,
                      Completion& done) {
  return service.set_rule_set(caller, a.positional[0], done);
}

Issued call_rules_get(LockService& service, const Caller& caller, const CallArgs&,
                      Completion& done) {
  return service.get_rule_set(caller, done);
}

Issued call_rules_delete(LockService& service, const Caller& caller, const CallArgs& a,
                         Completion& done) {
  return service.delete_rule_set(caller, a.positional[0], done);
}

void write_rules_set(ReplyWriter& out, Answer& answer) {
  const auto& stored = std::get<RuleSetStored>(answer);
  out.map(2);
  out.field("name", stored.name);
  out.field("replaced", stored.replaced ? 1 : 0);
}

void write_rules_get(ReplyWriter& out, Answer& answer) {
  const auto& current = std::get<std::optional<RuleSetPut>>(answer);
  if (!current) {
    out.null();
    return;
  }
  out.map(2);
  out.field("name", current->name);
  out.field("toml", current->toml);
}

}  // namespace holdfast::resp
