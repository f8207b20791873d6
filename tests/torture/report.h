// The summary a torture run prints: load, faults, fencing, overlap, recovery, violations.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "torture/history.h"

namespace holdfast::torture {

struct Report {
  std::string backend;
  std::int64_t seconds = 0;
  std::int64_t grants = 0;
  std::map<std::string, std::int64_t> errors;  // error replies by code, and lost connections
  std::map<std::string, std::int64_t> faults;  // injected, by kind
  std::int64_t fenced_accepted = 0;
  std::int64_t fenced_refused = 0;
  std::vector<std::int64_t> recovery_ms;  // per fault: the slowest key's first grant after it
  std::int64_t recovery_bound_ms = 0;
  History::Findings findings;
  // The failover backend: per promotion and node, the first grant's delay; the keepers.
  bool keepers = false;
  std::vector<std::int64_t> promotion_ms;
  std::int64_t session_holds = 0;
  std::int64_t leases_kept = 0;
  std::int64_t renewals = 0;
  std::int64_t thefts_tried = 0;
  std::int64_t holds_lost = 0;
  std::int64_t server_log_lines = 0;
  std::string server_log_tail;  // shown with the violations

  bool passed() const { return findings.violations.empty(); }
  void print(std::ostream& out) const;
};

}  // namespace holdfast::torture
