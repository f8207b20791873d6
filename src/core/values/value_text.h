// A typed value as one line of text, the same for equal values whatever their history (a
// hash's fields sorted): "7", "zset[a=1,b=2.5,]", "hash[f=v,]", "list[a,b,]". For tests and
// the fuzzer's checks that two stores hold the same.
#pragma once

#include <string>

#include "core/values/value.h"

namespace holdfast {

std::string canonical_text(const Value& value);

}  // namespace holdfast
