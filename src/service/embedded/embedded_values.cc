// EmbeddedBackend's typed values (docs/redis-locks.md, "Typed values"): the commands on
// counters, sorted sets, hashes and lists, and TYPE, PTTL, GETDEL and the EXPIRE family where
// the key holds a value.
//
// What a key holds is decided here for the embedded store, with the rules of
// service/redis_idiom.h: the value store first (a lookup drops an expired value), then the
// lock table. A typed command that meets a lock answers WRONGTYPE (typed_command_on_lock); a
// write also refuses a key the table only queues for or keeps closed, so that a key never
// becomes both. Every edit a command makes is appended to the log like a grant, and the reply
// waits for it (finish_when_durable).
#include "core/values/value_ops.h"
#include "service/embedded/embedded_backend.h"
#include "service/redis_idiom.h"

namespace holdfast {

std::optional<Error> EmbeddedBackend::lock_at(const ValueRequest& r, Millis t) {
  const KeyPeek p = table_.peek(r.key, t);
  if (!p.in_use) return std::nullopt;
  if (p.held) return typed_command_on_lock(r, p.owner);
  if (p.grouped) {
    auto st = table_.status(r.key, t);
    if (st.ok() && st->held) return typed_command_on_lock(r, st->hold.owner);
  }
  // Queued for or closed, not held: a read finds no value there, a write may not make one.
  if (value_op_writes(r.op)) return typed_command_on_lock(r, std::nullopt);
  return std::nullopt;
}

Issued EmbeddedBackend::value(const Caller&, const ValueRequest& r, const KeyAccess& access,
                              Completion& done) {
  const Millis t = now();
  switch (r.op) {
    case ValueOp::kType: {
      std::string_view type = "none";
      if (const ValueCell* cell = values_.find(r.key, t)) {
        type = type_name(cell->value->type());
      } else if (pttl_of(r.key, t) != -2) {
        type = "string";  // a lock, as Redis calls a key made by SET
      }
      return answer(done, Answer(ValueReply::status(type)));
    }
    case ValueOp::kPTtl:
      return answer(done, Answer(ValueReply::of_integer(pttl_of(r.key, t))));
    case ValueOp::kGetDel:
      return get_del(r.key, access, t, done);
    default:
      break;
  }
  const bool writes = value_op_writes(r.op);
  if (writes && store_fault_) return answer(done, *store_fault_);
  // Where the key holds no value, the lock table may have it.
  auto out = values_.run(r, t, [&] { return lock_at(r, t); });
  if (!out.ok()) return answer(done, std::move(out).error());
  log_edits(out->edits);
  return answer(done, Answer(std::move(out->reply)));
}

std::int64_t EmbeddedBackend::pttl_of(std::string_view key, Millis t) {
  if (const ValueCell* cell = values_.find(key, t))
    return cell->expires_at == kNever ? -1 : cell->expires_at - t;
  const KeyPeek p = table_.peek(key, t);
  Millis end = p.lease_expires_at;
  if (p.grouped) {
    auto st = table_.status(key, t);
    if (!st.ok() || !st->held) return -2;
    end = st->hold.lease_expires_at;
  } else if (!p.held) {
    return -2;
  }
  return end == kNever ? -1 : std::max<Millis>(end - t, 0);
}

Issued EmbeddedBackend::get_del(std::string_view key, const KeyAccess& access, Millis t,
                                Completion& done) {
  if (store_fault_) return answer(done, *store_fault_);
  ValueReply reply;  // nil: nothing there (or nothing the caller may take)
  if (const ValueCell* cell = values_.find(key, t)) {
    const auto* counter = std::get_if<std::int64_t>(&cell->value->data);
    if (counter == nullptr) return answer(done, wrong_type());
    if (access.value_denied) return answer(done, *access.value_denied);
    reply = ValueReply::bulk(std::to_string(*counter));
    values_.erase(key, t);
    ValueEdit gone;
    gone.key = key;
    gone.op = ValueEdit::Op::kDelete;
    last_sequence_ = store_.append(gone);
    return answer(done, Answer(std::move(reply)));
  }
  // A lock: GET, then DEL as DEL would (only the caller's own, unless it may free any); a lock
  // it may not free is left, and answered as if it were not there, as DEL counts it.
  const KeyPeek p = table_.peek(key, t);
  std::optional<std::string> held_value;
  if (p.held) {
    held_value.emplace(p.owner);
  } else if (p.grouped) {
    auto st = table_.status(key, t);
    if (st.ok() && st->held) held_value = std::move(st->hold.owner);
  }
  if (!held_value || !may_act_on(key, t, access.only_held_by))
    return answer(done, Answer(std::move(reply)));
  table_.force_release(key, t);
  if (!access.only_held_by) store_.require_sync();  // as DEL of another principal's hold
  return answer(done, Answer(ValueReply::bulk(*held_value)));
}

Issued EmbeddedBackend::expire_value(const ExpireArgs& args, const KeyAccess& access, Millis t,
                                     Completion& done) {
  if (access.value_denied) return answer(done, *access.value_denied);
  const ValueCell* cell = values_.find(args.key, t);
  const auto to = value_expire_to(args, cell->expires_at, t);
  if (!to) return answer(done, Answer(KeyCount{0}));
  ValueEdit e;
  e.key = args.key;
  if (*to <= t) {
    // As in Redis, an expiry that has already come deletes the key.
    values_.erase(args.key, t);
    e.op = ValueEdit::Op::kDelete;
  } else {
    values_.set_expiry(args.key, *to);
    e.op = ValueEdit::Op::kExpire;
    e.number = *to;
  }
  last_sequence_ = store_.append(e);
  return answer(done, Answer(KeyCount{1}));
}

}  // namespace holdfast
