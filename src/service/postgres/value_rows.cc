#include "service/postgres/value_rows.h"

#include "core/text.h"
#include "store/wal/value_codec.h"

namespace holdfast::pg {
namespace {

// bytea travels as text in its hex form, "\x" then two digits a byte.
std::string bytea_text(std::string_view bytes) { return "\\x" + hex_encode(bytes); }

Error damaged(std::string_view key) {
  return Error(ErrorCode::kInternal, "the stored value of a key does not decode")
      .with("key", std::string(key));
}

}  // namespace

std::vector<Statement> ValueRows::statements() {
  return {
      {"hf_key_open",
       "SELECT db_now, lock_in_use, lock_held, lock_owner, lock_mode, lock_lease_end, "
       "value_type, value_expires_at, value_data FROM holdfast_key_open($1, $2::boolean)"},
      {"hf_value_put",
       "INSERT INTO holdfast_values AS v (key, type, expires_at, data) "
       "VALUES ($1, $2::smallint, $3::bigint, $4::bytea) ON CONFLICT (key) DO UPDATE SET "
       "type = EXCLUDED.type, expires_at = EXCLUDED.expires_at, data = EXCLUDED.data"},
      {"hf_value_drop", "DELETE FROM holdfast_values WHERE key = $1"},
      {"hf_value_expire", "UPDATE holdfast_values SET expires_at = $2::bigint WHERE key = $1"},
      {"hf_value_delete", "SELECT holdfast_value_delete($1)"},
      {"hf_values_count",
       "SELECT count(*) FROM holdfast_values "
       "WHERE expires_at IS NULL OR expires_at > holdfast_now_ms()"},
      {"hf_values_sweep", "DELETE FROM holdfast_values WHERE expires_at <= holdfast_now_ms()"},
  };
}

Result<KeyRow> ValueRows::open(std::string_view key, bool claim) {
  auto rows = pool_.run("hf_key_open", Params().text(key).text(claim ? "true" : "false"));
  if (!rows.ok()) return std::move(rows).error();
  KeyRow row;
  row.db_now = rows->number(0, 0);
  row.lock_in_use = rows->boolean(0, 1);
  row.lock_held = rows->boolean(0, 2);
  row.lock_owner = rows->maybe_text(0, 3);
  row.lock_mode = rows->number(0, 4);
  row.lock_lease_end = rows->maybe_number(0, 5).value_or(kNever);
  if (rows->is_null(0, 6)) return row;
  const auto type = rows->number(0, 6);
  const std::string_view text = rows->text(0, 8);
  const auto bytes = text.starts_with("\\x") ? hex_decode(text.substr(2)) : std::nullopt;
  if (!bytes || type < 0 || !is_value_type(static_cast<std::uint8_t>(type))) return damaged(key);
  wal::Decoder in(*bytes);
  auto value = wal::read_value_body(in, static_cast<ValueType>(type));
  if (!value || !in.done()) return damaged(key);
  row.value.value = std::move(*value);
  row.value.expires_at = rows->maybe_number(0, 7).value_or(kNever);
  return row;
}

Status ValueRows::put(std::string_view key, const ValueCell& cell) {
  if (!cell.value) {
    auto rows = pool_.run("hf_value_drop", Params().text(key));
    if (!rows.ok()) return std::move(rows).error();
    return ok_status();
  }
  std::string body;
  wal::append_value_body(body, *cell.value);
  Params p;
  p.text(key).number(static_cast<std::int64_t>(cell.value->type()));
  if (cell.expires_at == kNever) {
    p.null();
  } else {
    p.number(cell.expires_at);
  }
  p.text(bytea_text(body));
  auto rows = pool_.run("hf_value_put", p);
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Status ValueRows::set_expiry(std::string_view key, Millis expires_at) {
  Params p;
  p.text(key);
  if (expires_at == kNever) {
    p.null();
  } else {
    p.number(expires_at);
  }
  auto rows = pool_.run("hf_value_expire", p);
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

Result<bool> ValueRows::remove(std::string_view key) {
  auto rows = pool_.run("hf_value_delete", Params().text(key));
  if (!rows.ok()) return std::move(rows).error();
  return rows->number(0, 0) == 1;
}

Result<std::int64_t> ValueRows::count_live() {
  auto rows = pool_.run("hf_values_count", Params());
  if (!rows.ok()) return std::move(rows).error();
  return rows->number(0, 0);
}

Status ValueRows::sweep_expired() {
  auto rows = pool_.run("hf_values_sweep", Params());
  if (!rows.ok()) return std::move(rows).error();
  return ok_status();
}

}  // namespace holdfast::pg
