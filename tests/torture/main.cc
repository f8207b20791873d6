// holdfast-torture: runs the real server under a contended lock load and injects faults
// (kill -9, SIGSTOP past the leases, vanishing clients, a full disk, EIO on write and on sync,
// slow syncs, wall-clock jumps; for a node over PostgreSQL a database restart; for three nodes
// over a primary and its synchronous standby, failovers) for a given time, checks from the
// clients' side that mutual exclusion and fencing held, that kept holds were kept and that
// every key came back, and prints a summary. docs/faults.md describes it.
//
// Exit codes: 0 no violation; 1 a violation (listed in the summary); 2 bad arguments or a
// server that would not start; 77 nothing could run here (every backend skipped).
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "torture/failover_run.h"
#include "torture/torture_run.h"

namespace {

using holdfast::torture::FaultKind;
using holdfast::torture::Outcome;
using holdfast::torture::TortureOptions;

constexpr const char* kUsage =
    "usage: holdfast-torture [--seconds N] [--backend embedded|postgres|failover|all]\n"
    "                        [--workers N] [--keys N] [--ttl-ms MS] [--bound-ms MS] [--seed N]\n"
    "                        [--fsync always|never] [--clock wall|monotonic-too]\n"
    "                        [--faults kill9,sigstop,disconnect,disk-full,eio-write,eio-sync,\n"
    "                                  slow-sync,db-restart,clock-jump,primary-frozen,\n"
    "                                  primary-stop,primary-kill9]\n"
    "  failover backend:     [--setup multi-host|proxy|both] [--session-grace-ms MS]\n"
    "                        [--statement-deadline-ms MS] [--promote-after-ms MS]\n"
    "                        [--promotion-bound-ms MS] [--replication sync|async]\n"
    "                        [--session-sweep current|legacy]\n"
    "defaults: 20 s, all backends, 6 workers on 3 keys, ttl 800 ms, bound 2500 ms, every fault;\n"
    "failover: both set-ups, grace 10000 ms, deadline 3000 ms, promotion after a kill -9 at the\n"
    "grace plus 2000 ms, every node granting within 2000 ms of a promotion (0: measured, not\n"
    "judged), sync replication\n";

bool parse_number(std::string_view text, std::int64_t min, std::int64_t max, std::int64_t* out) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
    return false;
  *out = value;
  return true;
}

bool parse_faults(std::string_view list, std::vector<FaultKind>* out) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    auto kind = holdfast::torture::parse_fault(name);
    if (!kind) {
      std::cerr << "holdfast-torture: unknown fault \"" << name << "\"\n";
      return false;
    }
    out->push_back(*kind);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  TortureOptions options;
  options.seed = static_cast<unsigned>(std::time(nullptr));
  std::string backends = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) {
      std::cerr << "holdfast-torture: " << flag << " needs a value\n" << kUsage;
      return 2;
    }
    const std::string_view value = argv[++i];
    std::int64_t n = 0;
    bool ok = true;
    if (flag == "--seconds") {
      ok = parse_number(value, 1, 86400, &options.seconds);
    } else if (flag == "--workers") {
      ok = parse_number(value, 1, 64, &n) && (options.workers = static_cast<int>(n), true);
    } else if (flag == "--keys") {
      ok = parse_number(value, 1, 64, &n) && (options.keys = static_cast<int>(n), true);
    } else if (flag == "--ttl-ms") {
      ok = parse_number(value, 100, 60'000, &options.ttl_ms);
    } else if (flag == "--bound-ms") {
      ok = parse_number(value, 0, 600'000, &options.bound_ms);
    } else if (flag == "--seed") {
      ok =
          parse_number(value, 0, 0xffffffff, &n) && (options.seed = static_cast<unsigned>(n), true);
    } else if (flag == "--backend") {
      ok = value == "embedded" || value == "postgres" || value == "failover" || value == "all";
      backends = value;
    } else if (flag == "--fsync") {
      ok = value == "always" || value == "never";
      options.fsync = value;
    } else if (flag == "--faults") {
      ok = parse_faults(value, &options.faults);
    } else if (flag == "--clock") {
      ok = value == "wall" || value == "monotonic-too";
      options.clock_monotonic_too = value == "monotonic-too";
    } else if (flag == "--setup") {
      ok = value == "multi-host" || value == "proxy" || value == "both";
      options.setup = value;
    } else if (flag == "--session-grace-ms") {
      ok = parse_number(value, 100, 600'000, &options.session_grace_ms);
    } else if (flag == "--statement-deadline-ms") {
      ok = parse_number(value, 100, 60'000, &options.statement_deadline_ms);
    } else if (flag == "--promote-after-ms") {
      ok = parse_number(value, 0, 600'000, &options.promote_after_ms);
    } else if (flag == "--promotion-bound-ms") {
      ok = parse_number(value, 0, 600'000, &options.promotion_bound_ms);
    } else if (flag == "--replication") {
      ok = value == "sync" || value == "async";
      options.async_replication = value == "async";
    } else if (flag == "--session-sweep") {
      ok = value == "current" || value == "legacy";
      options.legacy_sweep = value == "legacy";
    } else {
      std::cerr << "holdfast-torture: unknown option " << flag << "\n" << kUsage;
      return 2;
    }
    if (!ok) {
      std::cerr << "holdfast-torture: bad value for " << flag << ": \"" << value << "\"\n"
                << kUsage;
      return 2;
    }
  }
  // The torture program picks each server's store itself.
  ::unsetenv("HOLDFAST_TEST_STORE_URL");

  std::vector<std::string> order;
  if (backends == "all" || backends == "embedded") order.push_back("embedded");
  if (backends == "all" || backends == "postgres") order.push_back("postgres");
  if (backends == "all" || backends == "failover") order.push_back("failover");
  bool failed = false, ran = false;
  for (const std::string& backend : order) {
    options.backend = backend;
    try {
      const Outcome outcome = backend == "failover"
                                  ? holdfast::torture::run_failover(options, std::cout)
                                  : holdfast::torture::run_torture(options, std::cout);
      failed |= outcome == Outcome::kFailed;
      ran |= outcome != Outcome::kSkipped;
    } catch (const std::exception& e) {
      std::cerr << "holdfast-torture: " << backend << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (failed) return 1;
  return ran ? 0 : 77;
}
