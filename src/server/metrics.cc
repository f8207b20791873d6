#include "server/metrics.h"

#include <cstdio>

namespace holdfast {
namespace {

void line(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void value(std::string& out, const std::string& series, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), " %.17g\n", v);
  out += series;
  out += buf;
}

}  // namespace

void append_metric(std::string& out, const char* name, const char* type, const char* help,
                   double v) {
  line(out, name, type, help);
  value(out, name, v);
}

std::size_t Metrics::add_command(std::string_view label) {
  histograms_.push_back(Histogram{std::string(label), {}, 0, 0});
  return histograms_.size() - 1;
}

std::uint64_t Metrics::observed(std::size_t first, std::size_t last) const {
  std::uint64_t total = 0;
  for (std::size_t i = first; i < last && i < histograms_.size(); ++i)
    total += histograms_[i].count;
  return total;
}

void Metrics::observe(std::size_t command, std::chrono::nanoseconds elapsed) {
  Histogram& h = histograms_[command];
  const double seconds = static_cast<double>(elapsed.count()) / 1e9;
  std::size_t i = 0;
  while (i < kBucketsSeconds.size() && seconds > kBucketsSeconds[i]) ++i;
  if (i < kBucketsSeconds.size()) ++h.buckets[i];
  ++h.count;
  h.sum_nanos += static_cast<std::uint64_t>(elapsed.count());
}

std::string Metrics::render(const ServiceStats& stats, const Gauges& gauges) const {
  std::string out;
  out.reserve(8192);
  const auto& c = stats.counters;
  const auto& store = stats.store;
  struct Simple {
    const char* name;
    const char* type;
    const char* help;
    double value;
  };
  const Simple simple[] = {
      {"holdfast_locks_held", "gauge", "Keys held right now.", static_cast<double>(stats.held)},
      {"holdfast_waiters", "gauge", "Blocking acquires and assigns waiting in a queue.",
       static_cast<double>(stats.waiters)},
      {"holdfast_grants_total", "counter",
       "Holds granted (acquire, re-take, hand-off, assign, transfer).",
       static_cast<double>(c.grants)},
      {"holdfast_releases_total", "counter",
       "Holds ended by release, unassign or the end of a session.",
       static_cast<double>(c.releases)},
      {"holdfast_expiries_total", "counter", "Holds ended by their lease.",
       static_cast<double>(c.expiries)},
      {"holdfast_acquire_timeouts_total", "counter", "Waiters that timed out without a grant.",
       static_cast<double>(c.timeouts)},
      {"holdfast_renewals_total", "counter", "Leases renewed.", static_cast<double>(c.renewals)},
      {"holdfast_connections", "gauge", "Open client connections (RESP and HTTP).",
       static_cast<double>(gauges.connections)},
      {"holdfast_active_connections", "gauge",
       "Connections that sent requests lately (the count the commit on the event loop uses; "
       "idle, subscribed and watching connections drop out of it).",
       static_cast<double>(gauges.active)},
      {"holdfast_loop_poll_seconds_total", "counter",
       "Time the event loop spent polling for work instead of sleeping (idlePollUs).",
       gauges.loop_poll_seconds},
      {"holdfast_store_appends_total", "counter", "Changes appended to the store.",
       static_cast<double>(store.appended)},
      {"holdfast_wal_syncs_total", "counter",
       "fdatasync calls of the write-ahead log (one per group commit).",
       static_cast<double>(store.syncs)},
      {"holdfast_wal_sync_seconds_total", "counter", "Time spent in fdatasync.",
       static_cast<double>(store.sync_nanos) / 1e9},
      {"holdfast_wal_syncs_on_loop_total", "counter",
       "Of those, commits the event loop wrote and synced itself before it slept, instead of "
       "waking the log writer.",
       static_cast<double>(store.syncs_on_loop)},
      {"holdfast_wal_snapshots_total", "counter", "Snapshots written.",
       static_cast<double>(store.snapshots)},
      {"holdfast_wal_snapshots_skipped_total", "counter",
       "Snapshots given up because their encoder child failed; the log is kept whole.",
       static_cast<double>(store.snapshots_skipped)},
      {"holdfast_wal_snapshots_in_child_total", "counter",
       "Snapshots encoded in a forked child; a small state is encoded on the loop instead.",
       static_cast<double>(store.snapshots_in_child)},
      {"holdfast_wal_snapshot_in_progress", "gauge",
       "1 while a snapshot is being encoded or written.", store.snapshot_in_progress ? 1.0 : 0.0},
      {"holdfast_store_unavailable", "gauge",
       "1 while the store cannot make changes durable (a full or failing disk): changes are "
       "refused with STORE_UNAVAILABLE.",
       store.fault ? 1.0 : 0.0},
      {"holdfast_recovering_until_seconds", "gauge",
       "After an unclean stop in the horizon durability mode: the Unix time until which nothing "
       "new is granted; 0 while granting.",
       static_cast<double>(stats.recovering_until) / 1e3},
      {"holdfast_store_faults_total", "counter",
       "Times the store became unable to make changes durable.", static_cast<double>(store.faults)},
  };
  for (const Simple& m : simple) {
    line(out, m.name, m.type, m.help);
    value(out, m.name, m.value);
  }
  if (const auto& r = stats.replication) {
    // A node over PostgreSQL (docs/scale-out.md, "When PostgreSQL fails over").
    if (r->state != "unknown") {
      line(out, "holdfast_store_sync_replication", "gauge",
           "1 while the database's commits wait for a synchronous standby "
           "(synchronous_standby_names set, synchronous_commit on, remote_write or "
           "remote_apply); 0 while a failover could lose answered changes.");
      value(out, "holdfast_store_sync_replication", r->state == "synchronous" ? 1.0 : 0.0);
    }
    line(out, "holdfast_store_sync_standbys", "gauge",
         "Synchronous standbys connected to the primary; -1 when this node's database role may "
         "not see them (grant it pg_monitor).");
    value(out, "holdfast_store_sync_standbys", static_cast<double>(r->sync_standbys));
    line(out, "holdfast_store_primary_changes_total", "counter",
         "Times this node found its primary gone or another server promoted, and moved every "
         "connection.");
    value(out, "holdfast_store_primary_changes_total", static_cast<double>(r->primary_changes));
    line(out, "holdfast_store_timeline", "gauge",
         "The newest timeline of the primary this node has seen (a promotion adds one).");
    value(out, "holdfast_store_timeline", static_cast<double>(r->timeline));
    line(out, "holdfast_store_unsettled_writes", "gauge",
         "Writes whose outcome is unknown (no answer by the statement deadline) that the node "
         "has not yet settled from the database.");
    value(out, "holdfast_store_unsettled_writes", static_cast<double>(r->unsettled_writes));
  }
  // A backend that grants exclusive holds only has no split: all its grants are exclusive.
  const std::array<std::uint64_t, 3> by_mode =
      stats.grants_by_mode.value_or(std::array<std::uint64_t, 3>{c.grants, 0, 0});
  line(out, "holdfast_grants_by_mode_total", "counter",
       "holdfast_grants_total by the mode of the hold (docs/lock-kinds.md).");
  for (LockMode mode : {LockMode::kExclusive, LockMode::kShared, LockMode::kSemaphore})
    value(out, "holdfast_grants_by_mode_total{mode=\"" + std::string(mode_name(mode)) + "\"}",
          static_cast<double>(by_mode[static_cast<std::size_t>(mode)]));
  if (stats.held_by_mode) {
    line(out, "holdfast_holds_by_mode", "gauge",
         "holdfast_locks_held by the mode of the hold (docs/lock-kinds.md).");
    for (LockMode mode : {LockMode::kExclusive, LockMode::kShared, LockMode::kSemaphore})
      value(out, "holdfast_holds_by_mode{mode=\"" + std::string(mode_name(mode)) + "\"}",
            static_cast<double>((*stats.held_by_mode)[static_cast<std::size_t>(mode)]));
    line(out, "holdfast_semaphore_permits_held", "gauge",
         "Permits the semaphore holds take right now, over every semaphore key.");
    value(out, "holdfast_semaphore_permits_held", static_cast<double>(stats.permits_held));
  }
  line(out, "holdfast_tls_connections", "gauge",
       "Open connections that finished a TLS handshake (RESP and HTTP).");
  value(out, "holdfast_tls_connections", static_cast<double>(tls_open_));
  line(out, "holdfast_tls_handshake_failures_total", "counter",
       "TLS handshakes that failed, by reason (docs/tls.md).");
  for (std::size_t i = 0; i < tls_failures_.size(); ++i)
    value(out,
          "holdfast_tls_handshake_failures_total{reason=\"" +
              std::string(tls::kHandshakeFailureNames[i]) + "\"}",
          static_cast<double>(tls_failures_[i]));
  line(out, "holdfast_command_duration_seconds", "histogram",
       "Time from a command's arrival to its answer, its wait in a key's queue and for the "
       "log included.");
  for (const auto& h : histograms_) {
    std::uint64_t cumulative = 0;
    const std::string label = "command=\"" + h.label + "\"";
    for (std::size_t i = 0; i < kBucketsSeconds.size(); ++i) {
      cumulative += h.buckets[i];
      char le[32];
      std::snprintf(le, sizeof(le), "%g", kBucketsSeconds[i]);
      value(out, "holdfast_command_duration_seconds_bucket{" + label + ",le=\"" + le + "\"}",
            static_cast<double>(cumulative));
    }
    value(out, "holdfast_command_duration_seconds_bucket{" + label + ",le=\"+Inf\"}",
          static_cast<double>(h.count));
    value(out, "holdfast_command_duration_seconds_sum{" + label + "}",
          static_cast<double>(h.sum_nanos) / 1e9);
    value(out, "holdfast_command_duration_seconds_count{" + label + "}",
          static_cast<double>(h.count));
  }
  return out;
}

}  // namespace holdfast
