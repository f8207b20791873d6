#include "torture/history.h"

#include <algorithm>
#include <set>

namespace holdfast::torture {

void History::granted(const std::string& key, std::int64_t at_us, int server) {
  std::lock_guard lock(mu_);
  grants_[key].push_back(at_us);
  by_server_[server].push_back(at_us);
}

void History::add(Hold hold) {
  hold.end_us = std::min(hold.end_us, hold.lease_end_ms * 1000);  // the server frees it then
  std::lock_guard lock(mu_);
  holds_.push_back(std::move(hold));
}

void History::violation(std::string what) {
  std::lock_guard lock(mu_);
  violations_.push_back(std::move(what));
}

namespace {

// The earliest of `times` (nearly in order: arrival order) after `after_us`.
std::optional<std::int64_t> first_after(const std::vector<std::int64_t>& times,
                                        std::int64_t after_us) {
  std::optional<std::int64_t> first;
  for (auto at = times.rbegin(); at != times.rend(); ++at) {
    if (*at > after_us) {
      if (!first || *at < *first) first = *at;
    } else if (first) {
      break;
    }
  }
  return first;
}

}  // namespace

std::optional<std::int64_t> History::first_grant_on(int server, std::int64_t after_us) const {
  std::lock_guard lock(mu_);
  auto it = by_server_.find(server);
  if (it == by_server_.end()) return std::nullopt;
  return first_after(it->second, after_us);
}

std::optional<std::int64_t> History::first_grant_after(const std::string& key,
                                                       std::int64_t after_us) const {
  std::lock_guard lock(mu_);
  auto it = grants_.find(key);
  if (it == grants_.end()) return std::nullopt;
  return first_after(it->second, after_us);
}

namespace {

std::string describe(const Hold& h) {
  return h.key + " token " + std::to_string(h.token) + " [" + std::to_string(h.start_us) + ", " +
         std::to_string(h.end_us) + "] us, lease end " + std::to_string(h.lease_end_ms) + " ms";
}

void check_tokens(std::vector<Hold> holds, std::vector<std::string>& violations) {
  std::sort(holds.begin(), holds.end(), [](const Hold& a, const Hold& b) {
    return a.acquired_at_ms != b.acquired_at_ms ? a.acquired_at_ms < b.acquired_at_ms
                                                : a.token < b.token;
  });
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < holds.size(); ++i) {
    if (!seen.insert(holds[i].token).second)
      violations.push_back("token granted twice: " + describe(holds[i]));
    if (i > 0 && holds[i - 1].acquired_at_ms < holds[i].acquired_at_ms &&
        holds[i - 1].token >= holds[i].token)
      violations.push_back("token went back: " + describe(holds[i - 1]) + " then " +
                           describe(holds[i]));
  }
}

std::int64_t check_overlap(std::vector<Hold> holds, std::vector<std::string>& violations) {
  std::sort(holds.begin(), holds.end(),
            [](const Hold& a, const Hold& b) { return a.start_us < b.start_us; });
  std::int64_t max_overlap = 0;
  const Hold* latest_end = nullptr;  // of the holds so far, the one that ended last
  for (const Hold& h : holds) {
    if (latest_end != nullptr && h.start_us < latest_end->end_us) {
      const std::int64_t overlap = latest_end->end_us - h.start_us;
      max_overlap = std::max(max_overlap, overlap);
      violations.push_back("two holds overlap by " + std::to_string(overlap) +
                           " us: " + describe(*latest_end) + " and " + describe(h));
    }
    if (latest_end == nullptr || h.end_us > latest_end->end_us) latest_end = &h;
  }
  return max_overlap;
}

}  // namespace

History::Findings History::check() const {
  std::lock_guard lock(mu_);
  Findings findings;
  findings.violations = violations_;
  std::map<std::string, std::vector<Hold>> by_key;
  std::vector<std::int64_t> delays_ms;
  for (const Hold& h : holds_) {
    ++findings.holds;
    by_key[h.key].push_back(h);
    delays_ms.push_back(std::max<std::int64_t>(0, h.start_us / 1000 - h.acquired_at_ms));
  }
  if (!delays_ms.empty()) {
    std::sort(delays_ms.begin(), delays_ms.end());
    findings.answer_delay_p50_ms = delays_ms[delays_ms.size() / 2];
    findings.answer_delay_max_ms = delays_ms.back();
  }
  for (auto& [key, holds] : by_key) {
    check_tokens(holds, findings.violations);
    std::vector<Hold> real;
    for (const Hold& h : holds) {
      if (h.start_us < h.lease_end_ms * 1000) {
        real.push_back(h);
      } else {
        ++findings.empty_holds;
      }
    }
    findings.max_overlap_us =
        std::max(findings.max_overlap_us, check_overlap(std::move(real), findings.violations));
  }
  return findings;
}

}  // namespace holdfast::torture
