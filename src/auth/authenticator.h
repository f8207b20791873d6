// Authenticator: turns a bearer token (and, optionally, the user name it claims) into a
// principal. The credentials file implements it; with no credentials the server runs in local
// open mode and has none.
#pragma once

#include <optional>
#include <string_view>

#include "core/principal.h"

namespace holdfast {

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // The principal whose token this is; when `user` is given it must also name that principal
  // (a member's userId or a function's name). nullopt: unknown credentials.
  virtual std::optional<Principal> authenticate(std::optional<std::string_view> user,
                                                std::string_view token) const = 0;
};

}  // namespace holdfast
