// PgBackend's typed values (docs/redis-locks.md, "Typed values"; docs/scale-out.md): the
// commands on counters, sorted sets, hashes and lists, and TYPE, PTTL and GETDEL, over the rows
// of value_rows.h. Each command decides as the embedded store does (the same operations,
// core/values/value_ops.h, and the same keyspace rules, service/redis_idiom.h); what differs is
// where the value lives, and that its reads and writes take the key's claim inside a
// transaction, so commands on one key from several nodes apply one after another.
#include <spdlog/spdlog.h>

#include <memory>

#include "core/values/value_ops.h"
#include "service/postgres/pg_backend.h"
#include "service/redis_idiom.h"

namespace holdfast {

thread_local bool PgBackend::tx_open_ = false;

Result<Answer> PgBackend::in_transaction(const std::function<Result<Answer>()>& body) {
  if (tx_open_) return body();
  auto tx = pool_->begin();
  if (!tx.ok()) return store_error(std::move(tx).error());
  Result<Answer> result = body();
  if (!result.ok()) return result;  // rolled back with `tx`: nothing changed
  if (auto st = (*tx)->commit(); !st.ok()) return store_error(std::move(st).error());
  return result;
}

std::optional<Error> PgBackend::value_in_the_way(std::string_view key) {
  // Outside a transaction the trigger refuses the grant on its own (WRONGTYPE). Inside one its
  // error would abort the whole transaction, a script's other commands with it: look first.
  if (!tx_open_ || tx_lock_keys_.contains(std::string(key))) return std::nullopt;
  auto row = values_->open(key, /*claim=*/true);
  if (!row.ok()) return store_error(std::move(row).error());
  if (row->value.value) return wrong_type();
  tx_lock_keys_.insert(std::string(key));
  return std::nullopt;
}

Result<std::optional<std::string>> PgBackend::lock_value_of(const pg::KeyRow& row,
                                                            const std::string& key) {
  if (!row.lock_held) return std::optional<std::string>();
  if (row.lock_mode == 0) return std::optional<std::string>(row.lock_owner.value_or(""));
  auto s = status_of(key);  // a shared or semaphore key: its newest hold's value, as GET says
  if (!s.ok()) return std::move(s).error();
  if (!s->held) return std::optional<std::string>();
  return std::optional<std::string>(std::move(s->hold.owner));
}

Issued PgBackend::value(const Caller&, const ValueRequest& request, const KeyAccess& access,
                        Completion& done) {
  auto kept = std::make_shared<ValueRequestCopy>(request);
  std::optional<std::string> only;
  if (access.only_held_by) only = std::string(*access.only_held_by);
  return run(done, [this, kept, only]() -> Result<Answer> {
    std::optional<std::string_view> who;
    if (only) who = *only;
    return do_value(kept->request(), who);
  });
}

Result<Answer> PgBackend::do_value(const ValueRequest& r,
                                   std::optional<std::string_view> only_held_by) {
  const std::string key(r.key);
  switch (r.op) {
    case ValueOp::kType:
    case ValueOp::kPTtl: {
      auto row = values_->open(key, tx_open_);
      if (!row.ok()) return store_error(std::move(row).error());
      const ValueCell& cell = row->value;
      if (r.op == ValueOp::kType) {
        std::string_view type = "none";
        if (cell.value) {
          type = type_name(cell.value->type());
        } else if (row->lock_held) {
          type = "string";  // a lock, as Redis calls a key made by SET
        }
        return Answer(ValueReply::status(type));
      }
      Millis end = 0;
      if (cell.value) {
        end = cell.expires_at;
      } else if (row->lock_held) {
        end = row->lock_lease_end;
        if (row->lock_mode !=
            0) {  // a group's row ends with its last lease; PTTL shows the newest's
          auto s = status_of(key);
          if (!s.ok()) return std::move(s).error();
          if (!s->held) return Answer(ValueReply::of_integer(-2));
          end = s->hold.lease_expires_at;
        }
      } else {
        return Answer(ValueReply::of_integer(-2));
      }
      return Answer(
          ValueReply::of_integer(end == kNever ? -1 : std::max<Millis>(end - row->db_now, 0)));
    }
    case ValueOp::kGetDel:
      return in_transaction([&] { return get_del(key, only_held_by); });
    default:
      break;
  }
  const bool writes = value_op_writes(r.op);
  auto body = [&]() -> Result<Answer> {
    // A read outside a transaction needs no claim: it is one statement.
    auto row = values_->open(key, writes || tx_open_);
    if (!row.ok()) return store_error(std::move(row).error());
    if (!row->value.value && row->lock_in_use && (writes || row->lock_held)) {
      auto lock_value = lock_value_of(*row, key);
      if (!lock_value.ok()) return std::move(lock_value).error();
      if (*lock_value || writes) return typed_command_on_lock(r, *lock_value);
    }
    ValueCell cell = std::move(row->value);
    auto out = run_value_op(r, cell);
    if (!out.ok()) return std::move(out).error();
    if (!out->edits.empty()) {
      if (auto st = values_->put(key, cell); !st.ok()) return store_error(std::move(st).error());
      tx_lock_keys_.erase(key);  // it may hold a value now
      ++counters_.writes;
    }
    return Answer(std::move(out->reply));
  };
  return writes ? in_transaction(body) : body();
}

Result<Answer> PgBackend::get_del(const std::string& key,
                                  std::optional<std::string_view> only_held_by) {
  auto row = values_->open(key, /*claim=*/true);
  if (!row.ok()) return store_error(std::move(row).error());
  if (row->value.value) {
    const auto* counter = std::get_if<std::int64_t>(&row->value.value->data);
    if (counter == nullptr) return wrong_type();
    const ValueReply reply = ValueReply::bulk(std::to_string(*counter));
    if (auto st = values_->put(key, ValueCell{}); !st.ok())
      return store_error(std::move(st).error());
    ++counters_.writes;
    return Answer(reply);
  }
  // A lock: GET, then DEL as DEL would; one the caller may not free is answered as absent.
  auto lock_value = lock_value_of(*row, key);
  if (!lock_value.ok()) return std::move(lock_value).error();
  if (!*lock_value) return Answer(ValueReply::null());
  auto freed = delete_lock(key, only_held_by);
  if (!freed.ok()) return std::move(freed).error();
  if (!*freed) return Answer(ValueReply::null());
  return Answer(ValueReply::bulk(**lock_value));
}

Result<std::optional<Answer>> PgBackend::expire_value(const ExpireArgs& args,
                                                      const KeyAccess& access) {
  const std::string key(args.key);
  // Most keys PEXPIRE meets are locks: a look without a claim or a transaction first.
  auto seen = values_->open(key, tx_open_);
  if (!seen.ok()) return store_error(std::move(seen).error());
  if (!seen->value.value) return std::optional<Answer>();
  if (access.value_denied) return *access.value_denied;
  auto changed = in_transaction([&]() -> Result<Answer> {
    auto row = values_->open(key, /*claim=*/true);
    if (!row.ok()) return store_error(std::move(row).error());
    if (!row->value.value) return Answer(KeyCount{0});  // gone meanwhile
    const auto to = value_expire_to(args, row->value.expires_at, row->db_now);
    if (!to) return Answer(KeyCount{0});
    // As in Redis, an expiry that has already come deletes the key.
    Status st = *to <= row->db_now ? values_->put(key, ValueCell{}) : values_->set_expiry(key, *to);
    if (!st.ok()) return store_error(std::move(st).error());
    ++counters_.writes;
    return Answer(KeyCount{1});
  });
  if (!changed.ok()) return std::move(changed).error();
  return std::optional<Answer>(std::move(*changed));
}

Result<bool> PgBackend::is_value(const std::string& key) {
  auto row = values_->open(key, tx_open_);
  if (!row.ok()) return store_error(std::move(row).error());
  return row->value.value.has_value();
}

}  // namespace holdfast
