// The table of (i): see kinds_report.h.
#include "kinds_report.h"

#include <string>
#include <vector>

#include "report_format.h"

namespace holdfast::bench {

void kinds_table(std::ostream& out, const SuiteResults& results) {
  std::vector<const Measurement*> rows;
  for (const auto& m : results.measurements)
    if (m.workload == "kinds") rows.push_back(&m);
  if (rows.empty()) return;
  const auto& o = results.options;
  out << "## (i) Lock kinds on one hot key, " << o.hot_connections << " connections\n\n"
      << "Every connection waits in the server's FIFO with `LOCK.ACQUIRE` in its mode, releases "
         "as soon as it is granted, and asks again as soon as the release is answered. "
         "*exclusive*: the plain lock, as Holdfast's row of (b). *shared*: one connection in "
      << o.writer_every
      << " asks exclusively (a writer), the others `MODE SHARED` (readers); readers' sections "
         "are counted apart from writers'. *semaphore*: every connection asks for one of "
      << o.semaphore_permits << " permits (`PERMITS " << o.semaphore_permits
      << "`). Wait: first attempt to grant. No peer has these modes: the figures are absolute, "
         "for comparing the kinds with each other on this run's host.\n\n";
  out << "| target | kind | sections/s (shared: readers) | wait p50 µs | wait p99 µs | writer "
         "sections/s | "
         "writer wait p50 µs | writer wait p99 µs | srv CPU | srv µs/section | timeouts | "
         "sections checked | violations |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Measurement* m : rows) {
    out << "| " << m->target << " | " << m->variant;
    if (m->failed) {
      out << " | failed: " << first_line(m->failure) << " |\n";
      continue;
    }
    const bool writers = m->variant == "shared";
    const double sections = double(m->ops + m->writer_ops);
    out << " | " << fmt_count(m->ops_per_sec) << " | " << fmt_us(m->p50_ns) << " | "
        << fmt_us(m->p99_ns) << " | " << (writers ? fmt_count(m->writer_ops_per_sec) : "–") << " | "
        << (writers ? fmt_us(m->writer_p50_ns) : "–") << " | "
        << (writers ? fmt_us(m->writer_p99_ns) : "–") << " | " << fmt(m->server_cpu_pct(), 0)
        << "% | " << fmt(sections > 0 ? 1e6 * m->server_cpu_s / sections : 0, 1) << " | "
        << m->timeouts << " | " << fmt_count(double(m->mutex.sections)) << " | "
        << (m->mutex.violations == 0 ? "0" : "**" + std::to_string(m->mutex.violations) + "**")
        << " |\n";
  }
  for (const Measurement* m : rows) {
    const std::string where = m->target + " " + m->variant + ": ";
    if (m->errors > 0)
      out << "\n" << where << m->errors << " errors, first: `" << first_line(m->first_error) << "`";
    if (m->mutex.violations > 0)
      out << "\n"
          << where << "the key held more than its mode allows: " << m->mutex.first_violation;
  }
  out << "\n";
}

}  // namespace holdfast::bench
