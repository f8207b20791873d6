// Who calls: a member (a signed-in user with a role and groups) or a function (a server-side
// caller acting with the app's own authority). docs/reference.md section 1.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace holdfast {

enum class PrincipalKind : unsigned char { kMember, kFunction };
enum class Role : unsigned char { kMember, kAdmin, kOwner };

std::string_view role_name(Role role);

struct Principal {
  PrincipalKind kind = PrincipalKind::kMember;
  std::string id;                                           // userId or function name
  Role role = Role::kMember;                                // members only
  std::vector<std::pair<std::string, std::string>> groups;  // (type, id) pairs

  // "user:<userId>" or "function:<name>": the heldBy of holds it makes. It encodes the kind,
  // so two principals with equal held_by() are the same principal of the same kind.
  std::string held_by() const {
    return (kind == PrincipalKind::kFunction ? "function:" : "user:") + id;
  }
  bool is_function() const { return kind == PrincipalKind::kFunction; }
  // Admins, owners and functions pass every rule and may list.
  bool is_privileged() const {
    return kind == PrincipalKind::kFunction || role == Role::kAdmin || role == Role::kOwner;
  }
  bool is_member_of(std::string_view type, std::string_view group_id) const {
    for (const auto& [t, g] : groups)
      if (t == type && g == group_id) return true;
    return false;
  }

  // Local open mode: every caller is user:local with role owner.
  static Principal local_owner() { return {PrincipalKind::kMember, "local", Role::kOwner, {}}; }
};

inline std::string_view role_name(Role role) {
  switch (role) {
    case Role::kMember:
      return "member";
    case Role::kAdmin:
      return "admin";
    case Role::kOwner:
      return "owner";
  }
  return "member";
}

}  // namespace holdfast
