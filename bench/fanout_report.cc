#include "fanout_report.h"

#include <optional>
#include <vector>

#include "report_format.h"

namespace holdfast::bench {
namespace {

const Measurement* find(const SuiteResults& r, const std::string& target,
                        const std::string& variant) {
  for (const auto& m : r.measurements)
    if (m.workload == "watchers" && m.target == target && m.variant == variant) return &m;
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
  const std::string n = std::to_string(o.watchers);
  out << "## (k) What lock-event watchers cost the lock path\n\n"
      << "Pairs as in (a) at " << o.watch_connections << " connections: with no watcher, with 1 "
      << "and with " << n << " `LOCK.WATCH` connections that read every event, and with 1 that "
      << "never reads (it opens as its window's warm-up ends, so the window holds its whole life), "
      << "in the same rounds; then " << n << " `LOCK.WATCH` connections beside " << n
      << " `GET /v1/events` streams, in rounds of their own (a stream keeps events on for a minute "
         "after it "
      << "closes, so it cannot share rounds with the windows without a watcher). A thread of the "
      << "client reads the watchers; its CPU is the client's. \"events made\" is the server's "
      << "`holdfast_events_total` over the windows and their warm-ups: 0 means the lock path made "
      << "no event at all. \"÷ base\" divides pairs/s by the row the ratio names, window by window "
      << "for \"per round\". Goals: with " << n << " watchers at least 0.9 of the pairs without; "
      << "with the one that never reads, at least 0.9 too, and the server cuts it off.\n\n"
      << "| target | readers | pairs/s | p99 µs | cli CPU | srv CPU | srv µs/pair | events made | "
         "÷ base | per round |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const std::string target : {"holdfast-never", "holdfast-always"}) {
    const Measurement* none = find(r, target, "0 watchers");
    const Measurement* again = find(r, target, n + " watchers, again");
    struct Row {
      std::string variant, label;
      const Measurement* base;
      std::string base_label;
    };
    const std::vector<Row> rows{
        {"0 watchers", "none", nullptr, ""},
        {"1 watchers", "1 LOCK.WATCH", none, "none"},
        {n + " watchers", n + " LOCK.WATCH", none, "none"},
        {"1 stalled", "1 LOCK.WATCH that never reads", none, "none"},
        {n + " watchers, again", n + " LOCK.WATCH (stream rounds)", nullptr, ""},
        {n + " streams", n + " /v1/events", again, n + " LOCK.WATCH"}};
    for (const Row& row : rows) {
      const Measurement* m = find(r, target, row.variant);
      if (m == nullptr) continue;
      out << "| " << target << " | " << row.label;
      if (m->failed) {
        out << " | failed: " << first_line(m->failure) << " ||||||||\n";
        continue;
      }
      std::optional<double> ratio;
      std::optional<RatioRange> rounds;
      if (row.base != nullptr && !row.base->failed && row.base->ops_per_sec > 0) {
        ratio = m->ops_per_sec / row.base->ops_per_sec;
        rounds = window_ratio_range(*m, *row.base);
      }
      out << " | " << fmt_count(m->ops_per_sec) << " | " << fmt_us(m->p99_ns) << " | "
          << fmt(m->client_cpu_pct(), 0) << "% | " << fmt(m->server_cpu_pct(), 0) << "% | "
          << fmt(m->server_us_per_op(), 2) << " | "
          << (m->events_made >= 0 ? fmt_count(static_cast<double>(m->events_made)) : "–") << " | "
          << (ratio ? fmt_ratio(ratio) + " " + row.base_label : "–") << " | "
          << (row.base != nullptr ? range_text(rounds) : "") << " |\n";
    }
  }
  out << "\n";
  for (const std::string target : {"holdfast-never", "holdfast-always"}) {
    const Measurement* m = find(r, target, "1 stalled");
    if (m == nullptr || m->failed || m->watchers_dropped < 0) continue;
    out << "On " << target << " the server cut off the watcher that never reads in "
        << m->watchers_dropped << " of " << m->rounds << " windows.\n";
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
