// A folder holding holdfast.toml and credentials.toml for a server in auth mode: members alice
// (token alice-secret, group ops/core) and bob (bob-secret), admin root (root-secret) and the
// function importer (fn-secret), with `cap` acquires per user per hour.
#pragma once

#include <string>
#include <vector>

#include "support/process.h"

namespace holdfast::testing {

class AuthConfig {
 public:
  explicit AuthConfig(int cap = 600, const std::string& extra_members = "");
  std::vector<std::string> flags() const { return {"--config", dir_.path() + "/holdfast.toml"}; }
  // Appends a member to credentials.toml (the server reads it again on SIGHUP).
  void add_member(const std::string& id, const std::string& token);

 private:
  TempDir dir_;
};

}  // namespace holdfast::testing
