#include "core/values/value.h"
#include "core/values/value_text.h"

#include <algorithm>
#include <vector>

#include "core/values/redis_numbers.h"

namespace holdfast {

std::string_view type_name(ValueType type) {
  switch (type) {
    case ValueType::kCounter:
      return "string";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kHash:
      return "hash";
    case ValueType::kList:
      return "list";
  }
  return "none";
}

bool is_value_type(std::uint8_t byte) {
  return byte >= static_cast<std::uint8_t>(ValueType::kCounter) &&
         byte <= static_cast<std::uint8_t>(ValueType::kList);
}

std::size_t Value::size() const {
  switch (type()) {
    case ValueType::kCounter:
      return 1;
    case ValueType::kZSet:
      return std::get<ZSet>(data).size();
    case ValueType::kHash:
      return std::get<Hash>(data).size();
    case ValueType::kList:
      return std::get<List>(data).size();
  }
  return 0;
}

std::string canonical_text(const Value& value) {
  switch (value.type()) {
    case ValueType::kCounter:
      return std::to_string(std::get<std::int64_t>(value.data));
    case ValueType::kZSet: {
      std::string out = "zset[";
      for (const ZSet::Node* n : std::get<ZSet>(value.data))
        out += std::string(n->member()) + "=" + format_redis_double(n->score) + ",";
      return out + "]";
    }
    case ValueType::kHash: {
      std::vector<std::string> pairs;
      std::get<Hash>(value.data).for_each([&](std::string_view f, std::string_view v) {
        pairs.push_back(std::string(f) + "=" + std::string(v));
      });
      std::sort(pairs.begin(), pairs.end());
      std::string out = "hash[";
      for (const std::string& p : pairs) out += p + ",";
      return out + "]";
    }
    case ValueType::kList: {
      const List& l = std::get<List>(value.data);
      std::string out = "list[";
      for (std::size_t i = 0; i < l.size(); ++i) out += std::string(l.at(i)) + ",";
      return out + "]";
    }
  }
  return "";
}

}  // namespace holdfast
