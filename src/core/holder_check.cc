#include "core/holder_check.h"

#include <string>

namespace holdfast {

Result<HolderView> check_holder(HolderView current, std::string_view holder_id) {
  auto refuse = [&](std::string_view why) {
    return not_holder(current.key, "the key is not held by " + std::string(holder_id) + " (" +
                                       std::string(why) + ")")
        .with("holderId", std::string(holder_id));
  };
  if (!current.held) return refuse("it is free");
  if (!current.holder) return refuse("it is held by a handle, not assigned");
  if (*current.holder != holder_id) return refuse("it is assigned to another holder");
  return current;
}

}  // namespace holdfast
