#include "core/values/value_edit.h"

namespace holdfast {
namespace {

// The value as a T, made (with no expiry) when the key holds none or, which a log written by
// this server never asks for, one of another type.
template <typename T>
T& as(std::optional<Value>& value, Millis& expires_at) {
  if (!value || !std::holds_alternative<T>(value->data)) {
    value.emplace(Value{T{}});
    expires_at = kNever;
  }
  return std::get<T>(value->data);
}

}  // namespace

void apply_edit(const ValueEdit& e, std::optional<Value>& value, Millis& expires_at) {
  if (e.fresh) {
    value.reset();
    expires_at = kNever;
  }
  switch (e.op) {
    case ValueEdit::Op::kDelete:
      value.reset();
      expires_at = kNever;
      return;
    case ValueEdit::Op::kExpire:
      if (value) expires_at = e.number;
      return;
    case ValueEdit::Op::kCounterSet:
      as<std::int64_t>(value, expires_at) = e.number;
      return;
    case ValueEdit::Op::kZSetPut: {
      ZSet& z = as<ZSet>(value, expires_at);
      for (std::size_t i = 0; i < e.items.size() && i < e.scores.size(); ++i)
        z.put(e.items[i], e.scores[i]);
      break;
    }
    case ValueEdit::Op::kZSetRemove:
      if (value && std::holds_alternative<ZSet>(value->data)) {
        ZSet& z = std::get<ZSet>(value->data);
        for (const std::string& m : e.items) z.remove(m);
      }
      break;
    case ValueEdit::Op::kHashPut: {
      Hash& h = as<Hash>(value, expires_at);
      for (std::size_t i = 0; i + 1 < e.items.size(); i += 2) h.put(e.items[i], e.items[i + 1]);
      break;
    }
    case ValueEdit::Op::kHashRemove:
      if (value && std::holds_alternative<Hash>(value->data)) {
        Hash& h = std::get<Hash>(value->data);
        for (const std::string& f : e.items) h.remove(f);
      }
      break;
    case ValueEdit::Op::kListPush: {
      List& l = as<List>(value, expires_at);
      for (const std::string& item : e.items) {
        if (e.right) {
          l.push_back(item);
        } else {
          l.push_front(item);
        }
      }
      break;
    }
    case ValueEdit::Op::kListPop:
      if (value && std::holds_alternative<List>(value->data)) {
        List& l = std::get<List>(value->data);
        for (std::int64_t i = 0; i < e.number && !l.empty(); ++i) {
          if (e.right) {
            l.pop_back();
          } else {
            l.pop_front();
          }
        }
      }
      break;
    case ValueEdit::Op::kListRemove:
      if (value && std::holds_alternative<List>(value->data) && !e.items.empty())
        std::get<List>(value->data).remove(e.number, e.items[0]);
      break;
  }
  if (value && value->type() != ValueType::kCounter && value->size() == 0) {
    value.reset();
    expires_at = kNever;
  }
}

}  // namespace holdfast
