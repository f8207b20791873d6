#include "fanout_report.h"

#include <optional>
#include <vector>

#include "report_format.h"

namespace holdfast::bench {
namespace {

const Measurement* find(const SuiteResults& r, const std::string& target,
                        const std::string& variant_prefix) {
  for (const auto& m : r.measurements)
    if (m.workload == "watchers" && m.target == target && m.variant.starts_with(variant_prefix))
      return &m;
  return nullptr;
}

std::string range_text(const std::optional<RatioRange>& r) {
  return r ? fmt(r->low, 2) + "–" + fmt(r->high, 2) : "–";
}

void watchers_table(std::ostream& out, const SuiteResults& r) {
  bool any = false;
  for (const auto& m : r.measurements) any = any || m.workload == "watchers";
  if (!any) return;
  const SuiteOptions& o = r.options;
  out << "## (k) What lock-event watchers cost the lock path\n\n"
      << "Pairs as in (a) at " << o.watch_connections << " connections, with no `LOCK.WATCH` "
      << "connection and with " << o.watchers << " that read every event (a thread of the "
      << "client reads them; its CPU is the client's), in the same rounds. Goal: with watchers "
      << "at least 0.9 of the pairs without.\n\n"
      << "| target | watchers | pairs/s | p99 µs | cli CPU | srv CPU | srv µs/pair | "
         "with ÷ without | per round |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const std::string target : {"holdfast-never", "holdfast-always"}) {
    const Measurement* none = find(r, target, "0 ");
    const Measurement* some = find(r, target, std::to_string(o.watchers) + " ");
    for (const Measurement* m : {none, some}) {
      if (m == nullptr) continue;
      out << "| " << target << " | " << (m == none ? "0" : std::to_string(o.watchers));
      if (m->failed) {
        out << " | failed: " << first_line(m->failure) << " |||||||\n";
        continue;
      }
      std::optional<double> ratio;
      std::optional<RatioRange> rounds;
      if (m == some && none != nullptr && !none->failed && none->ops_per_sec > 0) {
        ratio = m->ops_per_sec / none->ops_per_sec;
        rounds = window_ratio_range(*m, *none);
      }
      out << " | " << fmt_count(m->ops_per_sec) << " | " << fmt_us(m->p99_ns) << " | "
          << fmt(m->client_cpu_pct(), 0) << "% | " << fmt(m->server_cpu_pct(), 0) << "% | "
          << fmt(m->server_us_per_op(), 2) << " | " << fmt_ratio(ratio) << " | "
          << (m == some ? range_text(rounds) : "") << " |\n";
    }
  }
  out << "\n";
}

void publish_table(std::ostream& out, const SuiteResults& r) {
  if (r.publish.empty()) return;
  const SuiteOptions& o = r.options;
  out << "## (l) PUBLISH to " << o.subscribers << " subscribers\n\n"
      << "One publisher connection keeps " << o.publish_depth << " `PUBLISH`es of a 32-byte "
      << "message in flight on one channel; " << o.subscribers << " subscriber connections read "
      << "(one client thread for all). Messages delivered per second, counted from what the "
      << "subscribers received, in the same rounds. Goal: Holdfast at least 1.0× Redis.\n\n"
      << "| target | delivered/s | published/s | srv CPU | srv µs/message | cli CPU | ÷ redis | "
         "per round |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  const PublishResult* redis = nullptr;
  for (const auto& p : r.publish)
    if (p.target == "redis" && !p.failed) redis = &p;
  for (const auto& p : r.publish) {
    out << "| " << p.target;
    if (p.failed) {
      out << " | failed: " << first_line(p.failure) << " ||||||\n";
      continue;
    }
    std::optional<double> ratio;
    std::optional<RatioRange> rounds;
    if (redis != nullptr && &p != redis && redis->delivered_per_sec() > 0) {
      ratio = p.delivered_per_sec() / redis->delivered_per_sec();
      rounds = ratio_range(p.window_rates, redis->window_rates);
    }
    const double published = p.seconds > 0 ? double(p.published) / p.seconds : 0;
    out << " | " << fmt_count(p.delivered_per_sec()) << " | " << fmt_count(published) << " | "
        << fmt(p.seconds > 0 ? 100 * p.server_cpu_s / p.seconds : 0, 0) << "% | "
        << fmt(p.server_us_per_message(), 3) << " | "
        << fmt(p.seconds > 0 ? 100 * p.client_cpu_s / p.seconds : 0, 0) << "% | "
        << fmt_ratio(ratio) << " | " << range_text(rounds) << " |\n";
  }
  out << "\n";
}

}  // namespace

void fanout_tables(std::ostream& out, const SuiteResults& results) {
  watchers_table(out, results);
  publish_table(out, results);
}

}  // namespace holdfast::bench
