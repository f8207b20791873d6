#include "core/holder_check.h"

#include <string>

namespace holdfast {

Result<HolderView> check_holder(HolderView current, std::string_view holder_id) {
  auto refuse = [&](std::string_view why, bool assigned) {
    Error e = not_holder(current.key, "the key is not held by " + std::string(holder_id) + " (" +
                                          std::string(why) + ")");
    e.with("holderId", std::string(holder_id)).with("assigned", assigned ? 1 : 0);
    return e;
  };
  if (!current.held) return refuse("it is free", false);
  if (!current.holder) return refuse("it is held by a handle, not assigned", false);
  if (*current.holder != holder_id) return refuse("it is assigned to another holder", true);
  return current;
}

}  // namespace holdfast
