// Encoding and decoding of records. Each payload is a flat sequence of fixed-width integers and
// length-prefixed strings; a decoder must consume the payload exactly, so a record of a newer
// format (extra fields) is reported, not half-read.
#include "store/wal/record.h"

#include <cassert>

#include <type_traits>

#include "core/lock_types.h"
#include "store/wal/value_codec.h"

namespace holdfast::wal {
namespace {

void append_payload(std::string& out, const Change& change) {
  std::visit(
      [&out](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, Granted>) {
          append_hold(out, c.hold);
        } else if constexpr (std::is_same_v<T, GroupGranted>) {
          put_u32(out, static_cast<std::uint32_t>(c.holds.size()));
          for (const HoldState& hold : c.holds) append_hold(out, hold);
        } else if constexpr (std::is_same_v<T, Renewed>) {
          put_str(out, c.key);
          put_u64(out, c.token);
          put_i64(out, c.lease_expires_at);
        } else if constexpr (std::is_same_v<T, Released>) {
          put_str(out, c.key);
          put_u64(out, c.token);
        } else if constexpr (std::is_same_v<T, RuleSetPut>) {
          put_str(out, c.name);
          put_str(out, c.toml);
        } else if constexpr (std::is_same_v<T, RuleSetDeleted>) {
          put_str(out, c.name);
        } else if constexpr (std::is_same_v<T, LeaseHorizon>) {
          put_i64(out, c.until);
          put_u64(out, c.tokens_through);
          put_i64(out, c.written_at);
          put_u8(out, c.clean ? 1 : 0);
          put_i64(out, c.max_lease);
        } else if constexpr (std::is_same_v<T, ValueEdit>) {
          append_value_edit(out, c);
        } else {
          static_assert(kUnhandled<T>, "every Change needs a record encoding");
        }
      },
      change);
}

Error malformed(RecordType type, std::string_view what) {
  return Error(ErrorCode::kInternal,
               std::string(record_type_name(type)) + " record: " + std::string(what));
}

}  // namespace

RecordType record_type_of(const Change& change) {
  return std::visit(
      [](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, Granted>)
          return RecordType::kGranted;
        else if constexpr (std::is_same_v<T, Renewed>)
          return RecordType::kRenewed;
        else if constexpr (std::is_same_v<T, Released>)
          return RecordType::kReleased;
        else if constexpr (std::is_same_v<T, RuleSetPut>)
          return RecordType::kRuleSetPut;
        else if constexpr (std::is_same_v<T, RuleSetDeleted>)
          return RecordType::kRuleSetDeleted;
        else if constexpr (std::is_same_v<T, LeaseHorizon>)
          return RecordType::kLeaseHorizon;
        else if constexpr (std::is_same_v<T, GroupGranted>)
          return RecordType::kGroupGranted;
        else if constexpr (std::is_same_v<T, ValueEdit>)
          return RecordType::kValueEdit;
        else
          static_assert(kUnhandled<T>, "every Change needs a record type");
      },
      change);
}

std::string_view record_type_name(RecordType type) {
  switch (type) {
    case RecordType::kGranted:
      return "Granted";
    case RecordType::kRenewed:
      return "Renewed";
    case RecordType::kReleased:
      return "Released";
    case RecordType::kRuleSetPut:
      return "RuleSetPut";
    case RecordType::kRuleSetDeleted:
      return "RuleSetDeleted";
    case RecordType::kLeaseHorizon:
      return "LeaseHorizon";
    case RecordType::kGroupGranted:
      return "GroupGranted";
    case RecordType::kValueEdit:
      return "ValueEdit";
  }
  return "unknown";
}

std::optional<RecordType> parse_record_type(std::uint8_t byte) {
  const auto type = static_cast<RecordType>(byte);
  switch (type) {
    case RecordType::kGranted:
    case RecordType::kRenewed:
    case RecordType::kReleased:
    case RecordType::kRuleSetPut:
    case RecordType::kRuleSetDeleted:
    case RecordType::kLeaseHorizon:
    case RecordType::kGroupGranted:
    case RecordType::kValueEdit:
      return type;
  }
  return std::nullopt;
}

std::size_t append_record(std::string& out, const Change& change) {
  const std::size_t start = out.size();
  put_u8(out, static_cast<std::uint8_t>(record_type_of(change)));
  put_u32(out, 0);  // payload_length, filled in below
  append_payload(out, change);
  const std::size_t size = out.size() - start;
  store_u32_at(out, start + 1, static_cast<std::uint32_t>(size - kRecordHeaderSize));
  return size;
}

void append_hold(std::string& out, const HoldView& hold) {
  const bool with_mode = hold.mode != LockMode::kExclusive;
  const bool with_delay = hold.lock_delay_ms > 0;
  const std::size_t size = kMinHoldSize + hold.key.size() + hold.held_by.size() +
                           hold.owner.size() + hold.holder_id.size() +
                           (with_mode ? kHoldModeSize : 0) + (with_delay ? kHoldDelaySize : 0);
  const std::size_t at = out.size();
  out.resize(at + size);
  char* p = out.data() + at;
  p = write_str(p, hold.key);
  p = write_bytes(p, std::string_view(reinterpret_cast<const char*>(hold.handle.bytes.data()),
                                      hold.handle.bytes.size()));
  p = write_u64(p, hold.token);
  p = write_str(p, hold.held_by);
  p = write_str(p, hold.owner);
  p = write_str(p, hold.holder_id);
  p = write_u64(p, static_cast<std::uint64_t>(hold.acquired_at));
  p = write_u64(p, static_cast<std::uint64_t>(hold.lease_expires_at));
  p = write_u8(p, static_cast<std::uint8_t>(hold.scope));
  const auto kind = static_cast<std::uint8_t>(hold.kind);
  const auto flags = static_cast<std::uint8_t>((with_mode ? kHoldModeFollows : 0) |
                                               (with_delay ? kHoldDelayFollows : 0));
  p = write_u8(p, static_cast<std::uint8_t>(kind | flags));
  if (with_mode) {
    p = write_u8(p, static_cast<std::uint8_t>(hold.mode));
    p = write_u32(p, hold.take);
    p = write_u32(p, hold.permits);
  }
  if (with_delay) p = write_u32(p, static_cast<std::uint32_t>(hold.lock_delay_ms));
  assert(p == out.data() + at + size);
}

HoldState read_hold(Decoder& in) {
  HoldState hold;
  hold.key = in.str();
  hold.handle.bytes = in.fixed<16>();
  hold.token = in.u64();
  hold.held_by = in.str();
  hold.owner = in.str();
  hold.holder_id = in.str();
  hold.acquired_at = in.i64();
  hold.lease_expires_at = in.i64();
  const std::uint8_t scope = in.u8();
  const std::uint8_t kind_byte = in.u8();
  const auto kind = static_cast<std::uint8_t>(kind_byte & ~(kHoldModeFollows | kHoldDelayFollows));
  if (scope > static_cast<std::uint8_t>(Scope::kSession) ||
      kind > static_cast<std::uint8_t>(HoldKind::kAssigned)) {
    in.fail();
  }
  hold.scope = static_cast<Scope>(scope);
  hold.kind = static_cast<HoldKind>(kind);
  if ((kind_byte & kHoldModeFollows) != 0) {
    const std::uint8_t mode = in.u8();
    hold.take = in.u32();
    hold.permits = in.u32();
    // Only a handle hold has a mode, and an exclusive one never writes it.
    if (mode == 0 || mode > static_cast<std::uint8_t>(LockMode::kSemaphore) ||
        hold.kind != HoldKind::kHandle) {
      in.fail();
    }
    hold.mode = static_cast<LockMode>(mode);
  }
  if ((kind_byte & kHoldDelayFollows) != 0) {
    hold.lock_delay_ms = in.u32();
    // Only a delay the server accepts is ever written.
    if (hold.lock_delay_ms < 1 || hold.lock_delay_ms > kMaxLockDelayMs) in.fail();
  }
  return hold;
}

Result<Change> decode_record(RecordType type, std::string_view payload) {
  Decoder in(payload);
  Change change;
  switch (type) {
    case RecordType::kGranted:
      change = Granted{read_hold(in)};
      break;
    case RecordType::kGroupGranted: {
      GroupGranted g;
      const std::uint32_t count = in.u32();
      // Bounded by the payload, so a damaged count cannot ask for a huge allocation.
      if (count == 0 || count > payload.size() / kMinHoldSize) {
        in.fail();
      } else {
        g.holds.reserve(count);
        for (std::uint32_t i = 0; i < count && in.ok(); ++i) g.holds.push_back(read_hold(in));
      }
      change = std::move(g);
      break;
    }
    case RecordType::kRenewed: {
      Renewed r;
      r.key = in.str();
      r.token = in.u64();
      r.lease_expires_at = in.i64();
      change = std::move(r);
      break;
    }
    case RecordType::kReleased: {
      Released r;
      r.key = in.str();
      r.token = in.u64();
      change = std::move(r);
      break;
    }
    case RecordType::kRuleSetPut: {
      RuleSetPut r;
      r.name = in.str();
      r.toml = in.str();
      change = std::move(r);
      break;
    }
    case RecordType::kRuleSetDeleted:
      change = RuleSetDeleted{std::string(in.str())};
      break;
    case RecordType::kLeaseHorizon: {
      LeaseHorizon h;
      h.until = in.i64();
      h.tokens_through = in.u64();
      h.written_at = in.i64();
      const std::uint8_t clean = in.u8();
      if (clean > 1) in.fail();
      h.clean = clean == 1;
      // Older logs end the record here: no bound on the longest lease.
      if (!in.done()) h.max_lease = in.i64();
      if (h.max_lease < 0) in.fail();
      change = h;
      break;
    }
    case RecordType::kValueEdit:
      change = read_value_edit(in);
      break;
  }
  if (!in.ok()) return malformed(type, "payload is shorter than its fields or has a bad value");
  if (!in.done()) return malformed(type, "payload has bytes after its fields");
  return change;
}

Result<RecordView> next_record(std::string_view& body) {
  if (body.size() < kRecordHeaderSize)
    return Error(ErrorCode::kInternal, "record header runs past the end of its frame");
  const auto type_byte = static_cast<std::uint8_t>(body[0]);
  const std::uint32_t length = load_u32(body.data() + 1);
  if (length > body.size() - kRecordHeaderSize)
    return Error(ErrorCode::kInternal, "record payload runs past the end of its frame");
  const std::optional<RecordType> type = parse_record_type(type_byte);
  if (!type)
    return Error(ErrorCode::kInternal, "unknown record type " + std::to_string(type_byte) +
                                           " (written by a newer holdfast?)");
  RecordView view{*type, body.substr(kRecordHeaderSize, length)};
  body.remove_prefix(kRecordHeaderSize + length);
  return view;
}

}  // namespace holdfast::wal
