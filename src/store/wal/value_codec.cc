#include "store/wal/value_codec.h"

#include <bit>
#include <cmath>

namespace holdfast::wal {
namespace {

void put_f64(std::string& out, double v) { put_u64(out, std::bit_cast<std::uint64_t>(v)); }
double read_f64(Decoder& in) { return std::bit_cast<double>(in.u64()); }

// A count the remaining bytes cannot hold (each item takes at least `min_item` bytes) is
// damage, not a reason for a huge reserve().
bool plausible(Decoder& in, std::uint32_t count, std::size_t min_item) {
  if (count > in.remaining() / min_item) {
    in.fail();
    return false;
  }
  return true;
}

}  // namespace

void append_value_body(std::string& out, const Value& value) {
  std::visit(
      [&out](const auto& data) {
        using T = std::decay_t<decltype(data)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          put_i64(out, data);
        } else if constexpr (std::is_same_v<T, ZSet>) {
          put_u32(out, static_cast<std::uint32_t>(data.size()));
          for (const ZSet::Node* n : data) {
            put_f64(out, n->score);
            put_str(out, n->member());
          }
        } else if constexpr (std::is_same_v<T, Hash>) {
          put_u32(out, static_cast<std::uint32_t>(data.size()));
          data.for_each([&out](std::string_view f, std::string_view v) {
            put_str(out, f);
            put_str(out, v);
          });
        } else {
          put_u32(out, static_cast<std::uint32_t>(data.size()));
          for (std::size_t i = 0; i < data.size(); ++i) put_str(out, data.at(i));
        }
      },
      value.data);
}

void append_value(std::string& out, std::string_view key, const Value& value, Millis expires_at) {
  put_str(out, key);
  put_u8(out, static_cast<std::uint8_t>(value.type()));
  put_i64(out, expires_at);
  append_value_body(out, value);
}

std::optional<Value> read_value_body(Decoder& in, ValueType type) {
  Value value;
  switch (type) {
    case ValueType::kCounter:
      value.data = in.i64();
      break;
    case ValueType::kZSet: {
      ZSet z;
      const std::uint32_t count = in.u32();
      if (!plausible(in, count, 8 + 4)) break;
      for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
        const double score = read_f64(in);
        const std::string_view member = in.str();
        // A score is never NaN, and a member is never there twice.
        if (std::isnan(score) || !z.put(member, score)) in.fail();
      }
      value.data = std::move(z);
      break;
    }
    case ValueType::kHash: {
      Hash h;
      const std::uint32_t count = in.u32();
      if (!plausible(in, count, 4 + 4)) break;
      for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
        const std::string_view field = in.str();
        const std::string_view v = in.str();
        if (in.ok() && !h.put(field, v)) in.fail();
      }
      value.data = std::move(h);
      break;
    }
    case ValueType::kList: {
      List l;
      const std::uint32_t count = in.u32();
      if (!plausible(in, count, 4)) break;
      for (std::uint32_t i = 0; i < count && in.ok(); ++i) l.push_back(in.str());
      value.data = std::move(l);
      break;
    }
  }
  // Only a value with elements is ever written.
  if (in.ok() && value.type() != ValueType::kCounter && value.size() == 0) in.fail();
  if (!in.ok()) return std::nullopt;
  return value;
}

DurableValue read_value(Decoder& in) {
  DurableValue v;
  v.key = in.str();
  const std::uint8_t type = in.u8();
  v.expires_at = in.i64();
  if (!is_value_type(type)) {
    in.fail();
    return v;
  }
  if (auto body = read_value_body(in, static_cast<ValueType>(type))) v.value = std::move(*body);
  return v;
}

void append_value_edit(std::string& out, const ValueEdit& e) {
  put_str(out, e.key);
  put_u8(out, static_cast<std::uint8_t>(static_cast<std::uint8_t>(e.op) |
                                        (e.fresh ? kEditFresh : 0) | (e.right ? kEditRight : 0)));
  put_i64(out, e.number);
  put_u32(out, static_cast<std::uint32_t>(e.items.size()));
  const bool scored = e.op == ValueEdit::Op::kZSetPut;
  for (std::size_t i = 0; i < e.items.size(); ++i) {
    if (scored) put_f64(out, e.scores[i]);
    put_str(out, e.items[i]);
  }
}

ValueEdit read_value_edit(Decoder& in) {
  ValueEdit e;
  e.key = in.str();
  const std::uint8_t op = in.u8();
  e.fresh = (op & kEditFresh) != 0;
  e.right = (op & kEditRight) != 0;
  const auto code = static_cast<std::uint8_t>(op & ~(kEditFresh | kEditRight));
  if (code < static_cast<std::uint8_t>(ValueEdit::Op::kDelete) ||
      code > static_cast<std::uint8_t>(kLastValueEditOp)) {
    in.fail();
    return e;
  }
  e.op = static_cast<ValueEdit::Op>(code);
  e.number = in.i64();
  const std::uint32_t count = in.u32();
  const bool scored = e.op == ValueEdit::Op::kZSetPut;
  if (!plausible(in, count, scored ? 12 : 4)) return e;
  e.items.reserve(count);
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    if (scored) {
      const double score = read_f64(in);
      if (std::isnan(score)) in.fail();
      e.scores.push_back(score);
    }
    e.items.emplace_back(in.str());
  }
  return e;
}

}  // namespace holdfast::wal
