// The table of (j): see tls_report.h.
#include "tls_report.h"

#include <string>
#include <vector>

#include "report_format.h"

namespace holdfast::bench {
namespace {

const Measurement* find(const SuiteResults& r, const std::string& target, int c) {
  for (const auto& m : r.measurements)
    if (m.workload == "tls" && m.target == target && m.connections == c && !m.failed) return &m;
  return nullptr;
}

// The same server over plain TCP: holdfast-never-tls -> holdfast-never, redis-tls -> redis.
std::string plain_of(const std::string& target) {
  return target.ends_with("-tls") ? target.substr(0, target.size() - 4) : "";
}

}  // namespace

void tls_table(std::ostream& out, const SuiteResults& results) {
  std::vector<const Measurement*> rows;
  for (const auto& m : results.measurements)
    if (m.workload == "tls") rows.push_back(&m);
  if (rows.empty()) return;
  out << "## (j) Pairs as in (a), over TLS and over plain TCP\n\n"
      << "Holdfast `--fsync never` and Redis without persistence, each over TLS (TLS 1.3, "
         "OpenSSL's default cipher, an EC P-256 certificate) and over plain TCP, in the same "
         "rounds. Connections are opened and their handshakes done before each window, as "
         "client libraries keep theirs. *TLS ÷ TCP* is the server's figure over TLS divided by "
         "its own over TCP; *per round* the lowest and highest ratio of one window to the one "
         "beside it.\n\n"
      << "| target | conns | pairs/s | p50 µs | p99 µs | cli CPU | srv CPU | srv µs/pair | "
         "TLS ÷ TCP: pairs/s | per round | TLS ÷ TCP: srv µs/pair |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Measurement* m : rows) {
    out << "| " << m->target << " | " << m->connections;
    if (m->failed) {
      out << " | failed: " << first_line(m->failure) << " |\n";
      continue;
    }
    out << " | " << fmt_count(m->ops_per_sec) << " | " << fmt_us(m->p50_ns) << " | "
        << fmt_us(m->p99_ns) << " | " << fmt(m->client_cpu_pct(), 0) << "% | "
        << fmt(m->server_cpu_pct(), 0) << "% | " << fmt(m->server_us_per_op(), 1);
    const Measurement* plain = find(results, plain_of(m->target), m->connections);
    if (plain == nullptr || plain->ops_per_sec <= 0) {
      out << " | | | |\n";
      continue;
    }
    const auto rounds = window_ratio_range(*m, *plain);
    const bool cpu = m->server_us_per_op() > 0 && plain->server_us_per_op() > 0;
    out << " | " << fmt_ratio(m->ops_per_sec / plain->ops_per_sec) << " | "
        << (rounds ? fmt(rounds->low, 2) + "–" + fmt(rounds->high, 2) : "–") << " | "
        << (cpu ? fmt_ratio(m->server_us_per_op() / plain->server_us_per_op()) : "–") << " |\n";
  }
  for (const Measurement* m : rows) {
    if (m->errors > 0)
      out << "\n"
          << m->target << " at " << m->connections << " connections: " << m->errors
          << " errors, first: `" << first_line(m->first_error) << "`";
    if (m->mutex.violations > 0)
      out << "\n" << m->target << ": mutual exclusion violated: " << m->mutex.first_violation;
  }
  out << "\n";
}

}  // namespace holdfast::bench
