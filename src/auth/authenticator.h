// Authenticator: turns a bearer token (and, optionally, the user name it claims), or the common
// name of a verified client certificate, into a principal. The credentials file implements it;
// with no credentials the server runs in local open mode and has none.
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
  // The principal whose certCommonName is `common_name`: the subject common name of a client
  // certificate that the TLS handshake verified against the CA. nullopt: no such caller.
  virtual std::optional<Principal> authenticate_certificate(
      std::string_view /*common_name*/) const {
    return std::nullopt;
  }
};

}  // namespace holdfast
