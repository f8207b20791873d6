// The binary form of typed values (docs/wal-format.md, "Typed values"): a snapshot's value
// section, the ValueEdit record (type 8), and the `data` column of a value's row on
// PostgreSQL (service/postgres/value_rows.h), which is a value's body.
//
//   value      := key:str type:u8 expires_at:i64 body
//   body       := counter:i64                                   (type 1)
//               | count:u32 (score:f64 member:str){count}        (type 2, sorted set, in order)
//               | count:u32 (field:str value:str){count}         (type 3, hash)
//               | count:u32 element:str{count}                   (type 4, list, head first)
//   value_edit := key:str op:u8 number:i64 count:u32 item{count}
//                 op & 0x80: fresh; op & 0x40: the tail (lists); op & 0x3f: ValueEdit::Op
//                 item := score:f64 member:str (op 4, kZSetPut) | str (every other op)
//   f64 := the IEEE 754 bits as a u64
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/values/value.h"
#include "core/values/value_edit.h"
#include "store/wal/coding.h"

namespace holdfast::wal {

inline constexpr std::uint8_t kEditFresh = 0x80;
inline constexpr std::uint8_t kEditRight = 0x40;
// key:str type:u8 expires_at:i64 count:u32, all empty: bounds counts read from damaged files.
inline constexpr std::size_t kMinValueSize = 4 + 1 + 8 + 4;

void append_value_body(std::string& out, const Value& value);
void append_value(std::string& out, std::string_view key, const Value& value, Millis expires_at);
// A body of `type`; nullopt (and `in` failed) when it does not decode.
std::optional<Value> read_value_body(Decoder& in, ValueType type);
// A whole `value`; on malformed input marks `in` failed.
DurableValue read_value(Decoder& in);

void append_value_edit(std::string& out, const ValueEdit& edit);
// On malformed input marks `in` failed.
ValueEdit read_value_edit(Decoder& in);

}  // namespace holdfast::wal
