#include "torture/report.h"

#include <algorithm>

namespace holdfast::torture {
namespace {

std::string join(const std::map<std::string, std::int64_t>& counts) {
  if (counts.empty()) return "none";
  std::string text;
  for (const auto& [name, n] : counts)
    text += (text.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return text;
}

}  // namespace

void Report::print(std::ostream& out) const {
  std::int64_t total_faults = 0;
  for (const auto& [kind, n] : faults) total_faults += n;
  out << "holdfast-torture " << backend << ": " << seconds << " s\n"
      << "  grants:            " << grants
      << " (answered after their lease ended: " << findings.empty_holds << ")\n"
      << "  answers:           p50 " << findings.answer_delay_p50_ms << " ms, max "
      << findings.answer_delay_max_ms << " ms after the grant (acquiredAt)\n"
      << "  client errors:     " << join(errors) << "\n"
      << "  faults injected:   " << total_faults << " (" << join(faults) << ")\n"
      << "  fenced writes:     " << fenced_accepted << " accepted, " << fenced_refused
      << " refused\n"
      << "  max overlap:       " << findings.max_overlap_us << " us (must be 0)\n";
  if (keepers) {
    std::vector<std::int64_t> sorted = promotion_ms;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty()) {
      out << "  promotion->grant:  none measured\n";
    } else {
      out << "  promotion->grant:  max " << sorted.back() << " ms, p50 "
          << sorted[sorted.size() / 2] << " ms over " << sorted.size()
          << " (node, failover) pairs ("
          << (recovery_bound_ms > 0 ? "bound " + std::to_string(recovery_bound_ms) + " ms"
                                    : std::string("measured, not judged"))
          << ")\n";
    }
    out << "  keepers:           " << session_holds << " session holds, " << leases_kept
        << " leases, " << renewals << " renewals, " << thefts_tried << " thefts tried, "
        << holds_lost << " holds lost (must be 0)\n";
  } else {
    std::vector<std::int64_t> sorted = recovery_ms;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty()) {
      out << "  recovery:          no fault measured\n";
    } else {
      out << "  recovery:          max " << sorted.back() << " ms, p50 "
          << sorted[sorted.size() / 2] << " ms (bound " << recovery_bound_ms << " ms)\n";
    }
  }
  out << "  server log:        " << server_log_lines << " lines\n"
      << "  violations:        " << findings.violations.size() << "\n";
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < findings.violations.size() && i < kShown; ++i)
    out << "    " << findings.violations[i] << "\n";
  if (findings.violations.size() > kShown)
    out << "    ... and " << findings.violations.size() - kShown << " more\n";
  if (!passed()) out << "  the server's last log lines:\n" << server_log_tail;
}

}  // namespace holdfast::torture
