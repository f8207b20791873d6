#include "core/values/hash.h"

#include <cstring>
#include <new>

#include <absl/hash/hash.h>

namespace holdfast {

std::size_t Hash::FieldHash::operator()(std::string_view field) const {
  return absl::Hash<std::string_view>{}(field);
}

Hash::Entry* Hash::make_entry(std::string_view field, std::string_view value) {
  void* memory = ::operator new(sizeof(Entry) + field.size() + value.size());
  auto* e = new (memory)
      Entry{static_cast<std::uint32_t>(field.size()), static_cast<std::uint32_t>(value.size())};
  char* out = reinterpret_cast<char*>(e + 1);
  if (!field.empty()) std::memcpy(out, field.data(), field.size());
  if (!value.empty()) std::memcpy(out + field.size(), value.data(), value.size());
  return e;
}

void Hash::free_entry(Entry* entry) { ::operator delete(entry); }

Hash::~Hash() { clear(); }

Hash::Hash(const Hash& other) {
  fields_.reserve(other.size());
  other.for_each([this](std::string_view f, std::string_view v) { put(f, v); });
}

Hash& Hash::operator=(const Hash& other) {
  if (this != &other) {
    Hash copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Hash::Hash(Hash&& other) noexcept : fields_(std::move(other.fields_)) { other.fields_.clear(); }

Hash& Hash::operator=(Hash&& other) noexcept {
  if (this != &other) {
    clear();
    fields_ = std::move(other.fields_);
    other.fields_.clear();
  }
  return *this;
}

void Hash::clear() {
  for (const Slot& s : fields_) free_entry(s.entry);
  fields_.clear();
}

std::optional<std::string_view> Hash::get(std::string_view field) const {
  const auto it = fields_.find(field);
  if (it == fields_.end()) return std::nullopt;
  return it->entry->value();
}

bool Hash::put(std::string_view field, std::string_view value) {
  const auto it = fields_.find(field);
  if (it != fields_.end()) {
    if (it->entry->value() == value) return false;
    Entry* old = it->entry;
    it->entry = make_entry(field, value);
    free_entry(old);
    return false;
  }
  fields_.insert(Slot{make_entry(field, value)});
  return true;
}

bool Hash::remove(std::string_view field) {
  const auto it = fields_.find(field);
  if (it == fields_.end()) return false;
  Entry* e = it->entry;
  fields_.erase(it);
  free_entry(e);
  return true;
}

}  // namespace holdfast
