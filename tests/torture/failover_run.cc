#include "torture/failover_run.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "support/postgres_pair.h"
#include "support/server_process.h"
#include "support/tcp_proxy.h"
#include "torture/fenced_resource.h"
#include "torture/history.h"
#include "torture/keepers.h"
#include "torture/load.h"
#include "torture/report.h"
#include "torture/server_watch.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {
namespace {

using testing::PostgresPair;
using testing::ServerProcess;
using testing::TcpProxy;

constexpr int kNodes = 3;

std::vector<FaultKind> failover_kinds(const TortureOptions& options) {
  std::vector<FaultKind> kinds;
  for (FaultKind kind : kAllFaultKinds) {
    if (!is_failover(kind)) continue;
    if (options.faults.empty() ||
        std::find(options.faults.begin(), options.faults.end(), kind) != options.faults.end())
      kinds.push_back(kind);
  }
  return kinds;
}

// What a node before schema version 8 ran every second: free the session holds of every node whose
// heartbeat is older than the grace, whatever the database was doing meanwhile.
void legacy_sweep(const PostgresPair& pair, const std::string& schema, std::int64_t grace_ms) {
  const std::string grace = std::to_string(grace_ms);
  pair.sql(pair.primary(),
           "SET search_path = " + schema +
               "; WITH now AS MATERIALIZED (SELECT holdfast_now_ms() AS ms) "
               "UPDATE holdfast_holds h SET lease_expires_at = LEAST(coalesce(h.lease_expires_at, "
               "now.ms), now.ms), handle = NULL, scope = 0, node_id = NULL, session_id = NULL "
               "FROM now WHERE h.scope = 1 AND NOT EXISTS (SELECT 1 FROM holdfast_nodes n WHERE "
               "n.id = h.node_id AND n.heartbeat_at > now.ms - " +
               grace + "); SELECT count(*) FROM holdfast_free_session_members(NULL, NULL, " +
               grace + ")");
}

// One set-up: its own database pair, nodes, load and keepers, and the failovers.
void run_setup(const TortureOptions& options, const std::string& setup, std::ostream& out,
               Report& report, History& history, FencedResource& resource, std::mt19937& rng) {
  PostgresPair pair(!options.async_replication);
  std::unique_ptr<TcpProxy> proxy;
  std::string base;
  if (setup == "proxy") {
    proxy = std::make_unique<TcpProxy>(pair.port(pair.primary()));
    base = "postgresql://postgres@127.0.0.1:" + std::to_string(proxy->port()) + "/postgres";
  } else {
    base = pair.multi_host_url();
  }
  const std::string schema = "failover_" + std::to_string(::getpid());
  pair.sql(pair.primary(), "CREATE SCHEMA " + schema);
  const std::string store_url = base + (base.find('?') == std::string::npos ? "?" : "&") +
                                "options=-csearch_path%3D" + schema;
  out << "  " << setup << ": nodes on " << base << "\n" << std::flush;
  std::vector<std::unique_ptr<ServerProcess>> nodes;
  std::vector<std::unique_ptr<ServerWatch>> watches;
  std::vector<int> ports;
  for (int n = 0; n < kNodes; ++n) {
    nodes.push_back(std::make_unique<ServerProcess>(std::vector<std::string>{
        "--store", store_url, "--session-grace-ms", std::to_string(options.session_grace_ms),
        "--statement-deadline-ms", std::to_string(options.statement_deadline_ms)}));
    watches.push_back(std::make_unique<ServerWatch>(*nodes.back()));
    ports.push_back(nodes.back()->port());
  }
  std::vector<std::string> keys;
  for (int k = 0; k < options.keys; ++k) keys.push_back(setup + ":" + std::to_string(k));
  auto load = std::make_unique<Load>(
      LoadOptions{ports, options.workers, keys, options.ttl_ms, 10, options.seed}, history,
      resource);
  auto keepers = std::make_unique<Keepers>(KeeperOptions{ports}, history);

  const std::int64_t promote_after =
      options.promote_after_ms > 0 ? options.promote_after_ms : options.session_grace_ms + 2'000;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(options.seconds);
  std::vector<FaultKind> order = failover_kinds(options);
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i = 0;
       !order.empty() && (i < order.size() || std::chrono::steady_clock::now() < until); ++i) {
    if (i > 0 && i % order.size() == 0) std::shuffle(order.begin(), order.end(), rng);
    const FaultKind kind = order[i % order.size()];
    pause_ms(1'000 + static_cast<std::int64_t>(rng() % 1'000));  // the load runs undisturbed
    const int old = pair.primary();
    if (options.async_replication && kind != FaultKind::kPrimaryFrozen) {
      // The unsafe set-up's loss made certain: commits stop reaching the standby a second
      // before the primary dies.
      pair.freeze_walsender();
      pause_ms(1'000);
    }
    std::optional<std::int64_t> resumed_us;
    switch (kind) {
      case FaultKind::kPrimaryFrozen:
        pair.freeze_primary();
        pause_ms(1'500);
        break;
      case FaultKind::kPrimaryStop:
        pair.stop_primary_immediate();
        pause_ms(500);
        break;
      default:
        pair.kill9_primary();
        pause_ms(promote_after);
        break;
    }
    pair.promote_standby();
    const std::int64_t promoted_us = wall_us();
    if (proxy) proxy->redirect(pair.port(pair.primary()));
    if (options.legacy_sweep) legacy_sweep(pair, schema, options.session_grace_ms);
    if (kind == FaultKind::kPrimaryFrozen) {
      pause_ms(2'000);
      pair.signal(old, SIGCONT);  // a second primary, on the old timeline
      resumed_us = wall_us();
      pause_ms(2'000);
      // A connection opened, or a statement begun, after the resumption. Statements a node
      // sent while the server was frozen (and abandoned at its deadline) sit in the server's
      // socket buffers and begin the moment it resumes: those do not count, so a statement
      // must begin later than half a second after the resumption to be a use of it.
      const std::string since =
          "to_timestamp(" + std::to_string(static_cast<double>(*resumed_us) / 1e6) + ")";
      const std::string used = pair.sql(
          old,
          "SELECT string_agg(format('pid %s %s, started %s, query at %s (resumed %s): %s', "
          "pid, state, backend_start, query_start, " +
              since +
              ", "
              "left(query, 50)), '; ') FROM pg_stat_activity WHERE application_name = "
              "'holdfast' AND (backend_start > " +
              since + " OR query_start > " + since + " + interval '500 ms')");
      if (!used.empty())
        history.violation(setup + ": nodes used the old primary after it resumed: " + used);
    }
    // Every node's first grant after the promotion: within the promotion bound, or, when the
    // bound is 0 (measured, not judged), at all within the wait a key gets below.
    const std::int64_t bound_ms = options.promotion_bound_ms > 0
                                      ? options.promotion_bound_ms
                                      : options.ttl_ms + options.bound_ms;
    const std::int64_t deadline_us = promoted_us + bound_ms * 1000;
    for (int n = 0; n < kNodes; ++n) {
      std::optional<std::int64_t> at;
      while (!(at = history.first_grant_on(n, promoted_us)) && wall_us() < deadline_us) pause_ms(5);
      if (!at || *at > deadline_us) {
        history.violation(setup + ", " + std::string(fault_name(kind)) + ": node " +
                          std::to_string(n) + " granted nothing within " +
                          std::to_string(bound_ms) + " ms of the promotion");
      } else {
        report.promotion_ms.push_back((*at - promoted_us) / 1000);
      }
    }
    // Every key too (as after any fault), counted from the promotion.
    for (const std::string& key : keys) {
      const std::int64_t key_deadline_us = promoted_us + (options.ttl_ms + options.bound_ms) * 1000;
      std::optional<std::int64_t> at;
      while (!(at = history.first_grant_after(key, promoted_us)) && wall_us() < key_deadline_us)
        pause_ms(5);
      if (!at || *at > key_deadline_us)
        history.violation(setup + ", " + std::string(fault_name(kind)) + ": " + key +
                          " was not granted again within " +
                          std::to_string(options.ttl_ms + options.bound_ms) +
                          " ms of the promotion");
    }
    pair.rebuild_standby();
    ++report.faults[std::string(fault_name(kind))];
    std::int64_t slowest = 0;
    for (int n = 0; n < kNodes; ++n) {
      if (auto at = history.first_grant_on(n, promoted_us))
        slowest = std::max(slowest, (*at - promoted_us) / 1000);
    }
    out << "  " << setup << ", " << fault_name(kind) << ": every node granted again within "
        << slowest << " ms of the promotion\n"
        << std::flush;
  }
  keepers->stop();
  load->stop();
  const Keepers::Counts kept = keepers->counts();
  report.session_holds += kept.session_holds;
  report.leases_kept += kept.leases;
  report.renewals += kept.renewals;
  report.thefts_tried += kept.thefts_tried;
  report.holds_lost += kept.lost;
  report.grants += load->grants();
  for (const auto& [code, n] : load->errors()) report.errors[code] += n;
  for (auto& watch : watches) {
    stop_server(*watch, history);
    report.server_log_lines += watch->lines();
    report.server_log_tail += watch->tail();
  }
}

}  // namespace

Outcome run_failover(const TortureOptions& options, std::ostream& out) {
  out << "holdfast-torture failover: " << options.seconds << " s per set-up, " << kNodes
      << " nodes, " << options.workers << " workers on " << options.keys << " keys, ttl "
      << options.ttl_ms << " ms, session grace " << options.session_grace_ms
      << " ms, statement deadline " << options.statement_deadline_ms << " ms, "
      << (options.async_replication ? "ASYNCHRONOUS" : "synchronous") << " standby"
      << (options.legacy_sweep ? ", the legacy session sweep" : "") << ", seed " << options.seed
      << "\n";
  if (failover_kinds(options).empty()) {
    out << "  skipped: no failover among the faults chosen\n";
    return Outcome::kSkipped;
  }
  std::vector<std::string> setups;
  if (options.setup == "both" || options.setup == "multi-host") setups.push_back("multi-host");
  if (options.setup == "both" || options.setup == "proxy") setups.push_back("proxy");
  History history;
  FencedResource resource;
  Report report;
  report.backend = "failover";
  report.recovery_bound_ms = options.promotion_bound_ms;
  report.keepers = true;
  std::mt19937 rng(options.seed);
  const auto began = std::chrono::steady_clock::now();
  for (const std::string& setup : setups) {
    try {
      run_setup(options, setup, out, report, history, resource, rng);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (what.find("binaries not found") != std::string::npos ||
          what.find("did not start") != std::string::npos) {
        out << "  skipped: " << what << "\n";
        return Outcome::kSkipped;
      }
      throw;
    }
  }
  report.seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - began)
          .count();
  report.fenced_accepted = resource.accepted();
  report.fenced_refused = resource.refused();
  report.findings = history.check();
  report.print(out);
  out << std::flush;
  return report.passed() ? Outcome::kPassed : Outcome::kFailed;
}

}  // namespace holdfast::torture
