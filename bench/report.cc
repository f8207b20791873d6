// The markdown report: see report.h. The charts are drawn by charts.cc.
//
// Every table row is one figure of one target; every ratio divides a Holdfast figure by the
// peer's figure from the same run (never across runs: the host drifts by tens of percent over
// minutes). Throughput ratios above 1 and p99 ratios below 1 favour Holdfast.
#include "report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "charts.h"
#include "efficiency_report.h"
#include "fanout_report.h"
#include "kinds_report.h"
#include "machine.h"
#include "process.h"
#include "report_format.h"
#include "tls_report.h"

namespace holdfast::bench {

namespace {

constexpr const char* kNever = "holdfast-never";
constexpr const char* kAlways = "holdfast-always";
// Holdfast serving the Redis lock idiom (SET NX PX + EVALSHA), the commands the redis targets get.
constexpr const char* kIdiomNever = "holdfast-redis-never";
constexpr const char* kIdiomAlways = "holdfast-redis-always";
constexpr const char* kSemNever = "holdfast-sem-never";
constexpr const char* kSemAlways = "holdfast-sem-always";

class Writer {
 public:
  explicit Writer(const SuiteResults& r) : r_(r) {}

  const Measurement* find(const std::string& workload, const std::string& target, int c) const {
    for (const auto& m : r_.measurements) {
      if (m.workload == workload && m.target == target && m.connections == c && !m.failed)
        return &m;
    }
    return nullptr;
  }

  // Holdfast figure ÷ peer figure of the same workload and connection count.
  std::optional<double> ratio(const std::string& workload, const std::string& holdfast,
                              const Measurement& peer, bool p99) const {
    const Measurement* h = find(workload, holdfast, peer.connections);
    if (h == nullptr) return std::nullopt;
    if (p99)
      return peer.p99_ns > 0 ? std::optional(double(h->p99_ns) / double(peer.p99_ns))
                             : std::nullopt;
    return peer.ops_per_sec > 0 ? std::optional(h->ops_per_sec / peer.ops_per_sec) : std::nullopt;
  }

  // The best PING+PING rate of any server at `c` connections: the ceiling of the client.
  const Measurement* floor_at(int c) const {
    const Measurement* best = nullptr;
    for (const auto& m : r_.measurements) {
      if (m.workload == "floor" && m.connections == c && !m.failed &&
          (best == nullptr || m.ops_per_sec > best->ops_per_sec)) {
        best = &m;
      }
    }
    return best;
  }

  int goal_connections() const {
    const auto& cs = r_.options.connections;
    if (std::find(cs.begin(), cs.end(), 64) != cs.end()) return 64;
    return cs.empty() ? 0 : *std::max_element(cs.begin(), cs.end());
  }

  void header(std::ostream& out, const std::string& date) const {
    const MachineInfo m = describe_machine();
    out << "# Holdfast benchmark, " << date << "\n\n";
    out << "Machine: " << m.cpus << " CPUs (`nproc`), " << m.cpu_model << ", " << m.kernel << ", "
        << fmt(m.memory_gib, 1) << " GiB RAM; load average at the end of the run " << m.load_average
        << ".\n\n";
    const auto& o = r_.options;
    out << "Run: " << fmt(o.duration_s, 1) << " s per figure after " << fmt(o.warmup_s, 1)
        << " s of warm-up, taken in " << o.rounds
        << " windows interleaved across the targets (so all see the same drift of the host); one "
           "single-threaded epoll client (`holdfast-bench`"
        << (o.client_poll_us > 0 ? ", polling for up to " + std::to_string(o.client_poll_us) +
                                       " µs before it sleeps, for every target alike"
                                 : std::string(", sleeping as soon as it has nothing to do"))
        << ") on the same machine; servers started by the harness on loopback; wall time "
        << fmt(r_.wall_seconds, 0) << " s"
        << (o.smoke ? "; **smoke run: the figures mean nothing**" : "")
        << (r_.interrupted ? "; **interrupted**" : "") << ".";
    const std::string commit =
        command_first_line({"git", "-C", HOLDFAST_SOURCE_DIR, "rev-parse", "--short", "HEAD"});
    if (!commit.empty()) {
      // Changed files other than the results this run writes make the tree "modified".
      std::string changes;
      run_command({"git", "-C", HOLDFAST_SOURCE_DIR, "status", "--porcelain",
                   "--untracked-files=no", "--", ".", ":(exclude)bench/results"},
                  changes);
      out << " Source tree at `" << commit << "`" << (changes.empty() ? "" : " (modified)") << ".";
    }
    out << "\n\n";
    out << "| target | what runs |\n|---|---|\n";
    for (const auto& t : r_.targets) {
      out << "| " << t.name << " | " << t.description;
      if (!t.failure.empty()) out << " — **did not start**: " << first_line(t.failure);
      out << " |\n";
    }
    out << "\nRatios are Holdfast ÷ peer from this run. Throughput: above 1 is Holdfast ahead. "
           "Latency: below 1 is Holdfast ahead. CPU columns are percent of one core over the "
           "window; \"cli poll\" is the part of the window the client spent polling for work "
           "(counted in its CPU, except where it yielded the CPU to another thread), so its CPU "
           "minus that is what the workload needed of it; \"srv µs/op\" is server CPU per unit "
           "of work, which drifts less than throughput when the host is busy.\n\n";
  }

  // Server CPU per unit of work of a Holdfast figure ÷ its peer's at the same workload and
  // connection count ("–" for a peer's own row).
  std::string cpu_ratio(const Measurement& m) const {
    const std::string peer = peer_of(m.target);
    const Measurement* p = peer.empty() ? nullptr : find(m.workload, peer, m.connections);
    if (p == nullptr || p->server_us_per_op() <= 0) return "–";
    return fmt_ratio(m.server_us_per_op() / p->server_us_per_op());
  }

  void streaming_table(std::ostream& out, const std::string& workload, const std::string& title,
                       const std::string& unit, const std::string& latency_what) const {
    std::vector<const Measurement*> rows;
    for (const auto& m : r_.measurements) {
      if (m.workload == workload) rows.push_back(&m);
    }
    if (rows.empty()) return;
    const bool hot = workload == "hotkey";
    const bool locks = workload != "floor";
    out << "## " << title << "\n\n"
        << "Latency: " << latency_what << ".\n\n";
    out << "| target | conns | " << unit
        << "/s | p50 µs | p99 µs | p99.9 µs | cli CPU | cli poll | srv CPU | srv µs/op | ÷ peer";
    if (locks) out << " | busy";
    if (hot) out << " | timeouts | fairness | min–max per conn";
    if (workload == "pairs" || hot) out << " | sections checked | ME violations";
    out << " |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:";
    if (locks) out << "|---:";
    if (hot) out << "|---:|---:|---:";
    if (workload == "pairs" || hot) out << "|---:|---:";
    out << "|\n";
    for (const Measurement* m : rows) {
      out << "| " << m->target << " | " << m->connections;
      if (m->failed) {
        out << " | failed: " << first_line(m->failure) << " |\n";
        continue;
      }
      out << " | " << fmt_count(m->ops_per_sec) << " | " << fmt_us(m->p50_ns) << " | "
          << fmt_us(m->p99_ns) << " | " << fmt_us(m->p999_ns) << " | "
          << fmt(m->client_cpu_pct(), 0) << "% | " << fmt(m->client_poll_pct(), 0) << "% | "
          << fmt(m->server_cpu_pct(), 0) << "% | " << fmt(m->server_us_per_op(), 1) << " | "
          << cpu_ratio(*m);
      if (locks) out << " | " << fmt_count(double(m->busy));
      if (hot) {
        out << " | " << m->timeouts << " | " << fmt(m->fairness, 2) << " | "
            << m->min_per_connection << "–" << m->max_per_connection;
      }
      if (workload == "pairs" || hot) {
        out << " | " << fmt_count(double(m->mutex.sections)) << " | "
            << (m->mutex.violations == 0 ? "0" : "**" + std::to_string(m->mutex.violations) + "**");
      }
      out << " |\n";
    }
    for (const Measurement* m : rows) {
      if (m->errors > 0) {
        out << "\n"
            << m->target << " at " << m->connections << " connections: " << m->errors
            << " errors, first: `" << first_line(m->first_error) << "`";
      }
      if (m->not_held > 0) {
        out << "\n"
            << m->target << " at " << m->connections << " connections: " << m->not_held
            << " releases answered \"not held\"";
      }
      if (m->mutex.violations > 0) {
        out << "\n" << m->target << ": mutual exclusion violated: " << m->mutex.first_violation;
      }
    }
    out << "\n";
    ratio_table(out, workload, rows);
  }

  void ratio_table(std::ostream& out, const std::string& workload,
                   const std::vector<const Measurement*>& rows) const {
    if (workload == "floor") return;
    const auto& targets = r_.options.targets;
    if (std::find(targets.begin(), targets.end(), kNever) == targets.end() &&
        std::find(targets.begin(), targets.end(), kAlways) == targets.end())
      return;  // nothing to divide (a scale-out run has its own table)
    std::ostringstream body;
    auto row = [&](const std::string& label, const Measurement& peer) {
      body << "| " << label << " | " << peer.connections << " | "
           << fmt_ratio(ratio(workload, kNever, peer, false)) << " | "
           << fmt_ratio(ratio(workload, kNever, peer, true)) << " | "
           << fmt_ratio(ratio(workload, kAlways, peer, false)) << " | "
           << fmt_ratio(ratio(workload, kAlways, peer, true)) << " |\n";
    };
    bool any = false;
    for (const Measurement* m : rows) {
      if (m->failed || m->target.rfind("holdfast", 0) == 0) continue;
      row(m->target, *m);
      any = true;
    }
    if (workload == "pairs") {
      for (int c : r_.options.connections) {
        if (const Measurement* f = floor_at(c)) {
          row("floor (PING+PING on " + f->target + ")", *f);
          any = true;
        }
      }
    }
    if (!any) return;
    out << "\nHoldfast ÷ peer, same run:\n\n"
        << "| peer | conns | never: ops | never: p99 | always: ops | always: p99 |\n"
        << "|---|---:|---:|---:|---:|---:|\n"
        << body.str() << "\n";
  }

  // Scale-out: (a) and (b) through N nodes over one PostgreSQL, next to PostgreSQL's own
  // advisory locks from the same run.
  void scaleout_table(std::ostream& out) const {
    std::vector<std::string> nodes;
    for (const auto& t : r_.targets) {
      if (t.name.rfind(kScaleOutTarget, 0) == 0) nodes.push_back(t.name);
    }
    const bool measured = std::any_of(
        r_.measurements.begin(), r_.measurements.end(),
        [](const Measurement& m) { return m.workload == "pairs" || m.workload == "hotkey"; });
    if (nodes.empty() || !measured) return;
    out << "## Scale-out: Holdfast nodes over one PostgreSQL\n\n"
        << "Each holdfast-pgN is N `holdfast serve --store postgresql://…` nodes over one "
           "PostgreSQL (default settings, synchronous commit), the client's connections spread "
           "round-robin over the nodes; `postgres` is PostgreSQL's advisory locks on its own "
           "PostgreSQL: pg_try_advisory_lock for pairs, a blocking pg_advisory_lock for the hot "
           "key, pg_advisory_unlock. Every process shares this machine's cores. Ratio: "
           "holdfast-pgN ÷ postgres at the same connection count.\n\n"
        << "| workload | conns | target | ops/s | p99 µs | srv CPU | ÷ postgres ops |\n"
        << "|---|---:|---|---:|---:|---:|---:|\n";
    for (const char* workload : {"pairs", "hotkey"}) {
      std::vector<int> counts = r_.options.connections;
      if (std::string(workload) == "hotkey") counts = {r_.options.hot_connections};
      for (int c : counts) {
        const Measurement* peer = find(workload, "postgres", c);
        std::vector<std::string> rows = nodes;
        rows.insert(rows.begin(), "postgres");
        for (const auto& name : rows) {
          const Measurement* m = find(workload, name, c);
          if (m == nullptr) continue;
          std::optional<double> ratio;
          if (peer != nullptr && peer->ops_per_sec > 0 && name != "postgres")
            ratio = m->ops_per_sec / peer->ops_per_sec;
          out << "| " << workload << " | " << c << " | " << name << " | "
              << fmt_count(m->ops_per_sec) << " | " << fmt_us(m->p99_ns) << " | "
              << fmt(m->server_cpu_pct(), 0) << "% | " << fmt_ratio(ratio) << " |\n";
        }
      }
    }
    out << "\n";
  }

  void memory_table(std::ostream& out) const {
    if (r_.memory.empty()) return;
    out << "## (d) Memory per held lock\n\n"
        << "RSS of the server process before and after loading the holds (pipelined "
           "try-acquires, TTL 1 h, 4 connections × 64 in flight), divided by the number of "
           "holds. Redis keys carry a 22-character token, Holdfast generates its own handle. "
           "The *-sem rows load redis-semaphore's Semaphore the same way, 64 holders to a key: "
           "bytes per member of a sorted set of 64 (a 22-character member and its score).\n\n"
        << "| target | holds | RSS before MiB | RSS after MiB | bytes/hold | load s | holds/s | "
           "Holdfast ÷ this |\n"
        << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    // Each row against Holdfast's of the same recipe: locks with locks, sorted-set members
    // with sorted-set members.
    const MemoryResult* hf_lock = nullptr;
    const MemoryResult* hf_sem = nullptr;
    for (const auto& m : r_.memory) {
      if (m.target.rfind("holdfast", 0) == 0 && !m.failed)
        (is_semaphore_target(m.target) ? hf_sem : hf_lock) = &m;
    }
    for (const auto& m : r_.memory) {
      const MemoryResult* hf = is_semaphore_target(m.target) ? hf_sem : hf_lock;
      out << "| " << m.target << " | " << fmt_count(double(m.holds));
      if (m.failed) {
        out << " | failed: " << first_line(m.failure) << " |\n";
        continue;
      }
      std::optional<double> ratio;
      if (hf != nullptr && m.bytes_per_hold > 0) ratio = hf->bytes_per_hold / m.bytes_per_hold;
      out << " | " << fmt_mib(m.rss_before) << " | " << fmt_mib(m.rss_after) << " | "
          << fmt(m.bytes_per_hold, 0) << " | " << fmt(m.load.seconds, 2) << " | "
          << fmt_count(m.load.seconds > 0 ? double(m.load.granted) / m.load.seconds : 0) << " | "
          << fmt_ratio(ratio) << " |\n";
    }
    out << "\n";
  }

  void restart_table(std::ostream& out) const {
    if (r_.restarts.empty()) return;
    out << "## (e) Restart time with live holds (Holdfast only)\n\n"
        << "Load the holds (TTL 1 h), `kill -9`, start again on the same data folder, time from "
           "exec until PING is answered. \"Empty\" is the same server restarted with nothing "
           "held: the fixed cost. Survival is checked on evenly spaced samples.\n\n"
        << "| target | holds | load s | empty restart ms | restart ms | sampled holds still held "
           "| quarantine ms (longest lease ms) |\n"
        << "|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : r_.restarts) {
      out << "| " << r.target << " | " << fmt_count(double(r.holds));
      if (r.failed) {
        out << " | failed: " << first_line(r.failure) << " |\n";
        continue;
      }
      out << " | " << fmt(r.load.seconds, 2) << " | " << fmt(r.empty_restart_ms, 0) << " | "
          << fmt(r.restart_ms, 0) << " | " << (r.still_held == r.sampled ? "" : "**")
          << r.still_held << " / " << r.sampled
          << (r.still_held == r.sampled ? "" : "** (holds lost)") << " | "
          << (r.quarantine_ms < 0
                  ? "–"
                  : fmt(r.quarantine_ms, 0) + " (" + fmt(r.longest_lease_ms, 0) + ")")
          << " |\n";
    }
    out << "\n";
  }

  // The speed goals: each goal as a ratio from this run. Data, one row per goal.
  void goals_table(std::ostream& out) const {
    // The goals compare the embedded server with its peers; a run without it has none.
    const auto& targets = r_.options.targets;
    if (std::find(targets.begin(), targets.end(), kNever) == targets.end() &&
        std::find(targets.begin(), targets.end(), kAlways) == targets.end())
      return;
    const int c = goal_connections();
    // (j)'s goal is at 64 connections when it ran there, else at its largest count.
    const auto& tcs = r_.options.tls_connections;
    const int tls_c = std::find(tcs.begin(), tcs.end(), 64) != tcs.end() ? 64
                      : tcs.empty()                                      ? 0
                                    : *std::max_element(tcs.begin(), tcs.end());
    struct Row {
      std::string goal;
      std::optional<double> value;
      double threshold;
      bool at_least;                          // value >= threshold (else value <= threshold)
      std::string unmet_because = {};         // set: not met whatever the value says
      std::optional<RatioRange> rounds = {};  // the ratio window by window
    };
    std::vector<Row> rows;
    // A row comparing two figures of workload w; only figures whose windows alternated with
    // each other have a per-round ratio.
    auto add_row = [&](const std::string& goal, const std::string& w, const std::string& hf,
                       const std::string& peer, double threshold, bool p99) {
      const int n = w == "hotkey" ? r_.options.hot_connections : w == "tls" ? tls_c : c;
      const Measurement* h = find(w, hf, n);
      const Measurement* p = find(w, peer, n);
      rows.push_back({goal,
                      p ? ratio(w, hf, *p, p99) : std::nullopt,
                      threshold,
                      !p99,
                      {},
                      h && p ? window_ratio_range(*h, *p, p99) : std::nullopt});
    };
    auto ops_row = [&](const std::string& goal, const std::string& w, const std::string& hf,
                       const std::string& peer,
                       double threshold) { add_row(goal, w, hf, peer, threshold, false); };
    auto p99_row = [&](const std::string& goal, const std::string& w, const std::string& hf,
                       const std::string& peer) { add_row(goal, w, hf, peer, 1.0, true); };
    const std::string cs = std::to_string(c);
    std::optional<double> floor_ratio;
    std::optional<RatioRange> floor_rounds;
    if (const Measurement* f = floor_at(c)) {
      floor_ratio = ratio("pairs", kNever, *f, false);
      // The suite runs each round's PING windows right before its pairs windows.
      if (const Measurement* h = find("pairs", kNever, c))
        floor_rounds = window_ratio_range(*h, *f);
    }
    rows.push_back({"(a) " + cs + " conns: never ÷ PING+PING floor",
                    floor_ratio,
                    0.9,
                    true,
                    {},
                    floor_rounds});
    ops_row("(a) " + cs + " conns: never ÷ redis", "pairs", kNever, "redis", 1.0);
    ops_row("(a) " + cs + " conns: always ÷ redis-aof", "pairs", kAlways, "redis-aof", 1.5);
    ops_row("(a) " + cs + " conns, the Redis idiom: never ÷ redis", "pairs", kIdiomNever, "redis",
            1.0);
    ops_row("(a) " + cs + " conns, the Redis idiom: always ÷ redis-aof", "pairs", kIdiomAlways,
            "redis-aof", 1.5);
    ops_row("(a) " + cs + " conns, redis-semaphore's Semaphore: never ÷ redis-sem", "pairs",
            kSemNever, "redis-sem", 1.0);
    ops_row("(a) " + cs + " conns, redis-semaphore's Semaphore: always ÷ redis-sem-aof", "pairs",
            kSemAlways, "redis-sem-aof", 1.5);
    ops_row("(a) " + cs + " conns: always ÷ postgres", "pairs", kAlways, "postgres", 3.0);
    ops_row("(a) " + cs + " conns: always ÷ etcd", "pairs", kAlways, "etcd", 10.0);
    std::string best_name;
    double best_rate = 0;
    for (const auto& m : r_.measurements) {
      if (m.workload == "hotkey" && !m.failed && m.target.rfind("holdfast", 0) != 0 &&
          m.ops_per_sec > best_rate) {
        best_rate = m.ops_per_sec;
        best_name = m.target;
      }
    }
    for (const char* hf : {kAlways, kNever}) {
      const std::string goal = std::string("(b) hot key: ") + (hf == kAlways ? "always" : "never") +
                               " ÷ best peer" + (best_name.empty() ? "" : " (" + best_name + ")");
      if (best_name.empty())
        rows.push_back({goal, std::nullopt, 5.0, true});
      else
        ops_row(goal, "hotkey", hf, best_name, 5.0);
    }
    const std::string depth = std::to_string(r_.options.depth);
    ops_row("(c) " + cs + " conns, depth " + depth + ": never ÷ redis", "pipeline", kNever, "redis",
            1.0);
    ops_row("(c) " + cs + " conns, depth " + depth + ": always ÷ redis-aof", "pipeline", kAlways,
            "redis-aof", 1.0);
    std::optional<double> mem_ratio;
    const MemoryResult* hf_mem = nullptr;
    const MemoryResult* redis_mem = nullptr;
    for (const auto& m : r_.memory) {
      if (m.failed || is_semaphore_target(m.target)) continue;
      (m.target.rfind("holdfast", 0) == 0 ? hf_mem : redis_mem) = &m;
    }
    if (hf_mem && redis_mem && redis_mem->bytes_per_hold > 0) {
      mem_ratio = hf_mem->bytes_per_hold / redis_mem->bytes_per_hold;
    }
    rows.push_back({"(d) bytes per hold ÷ redis's", mem_ratio, 1.0, false});
    std::optional<double> restart_s;
    std::string restart_unmet;
    for (const auto& x : r_.restarts) {
      if (x.failed) continue;
      restart_s = x.restart_ms / 1000;
      if (x.still_held != x.sampled) restart_unmet = "holds lost";
    }
    rows.push_back(
        {"(e) restart with " + fmt_count(double(r_.options.restart_holds)) + " holds, seconds",
         restart_s, 3.0, false, restart_unmet});
    ops_row("(j) " + std::to_string(tls_c) + " conns: never over TLS ÷ never over TCP", "tls",
            "holdfast-never-tls", kNever, 0.85);
    p99_row("(a) p99 at " + cs + " conns: never ÷ redis", "pairs", kNever, "redis");
    p99_row("(a) p99 at " + cs + " conns: always ÷ redis-aof", "pairs", kAlways, "redis-aof");
    std::uint64_t violations = 0, sections = 0;
    for (const auto& m : r_.measurements) {
      violations += m.mutex.violations;
      sections += m.mutex.sections;
    }

    out << "## Speed goals, measured in this run\n\n"
        << "\"never\"/\"always\" are Holdfast with `--fsync never`/`always`. A goal is met when "
           "the ratio from this run is on the right side of its bound. \"Per round\" is the "
           "lowest and highest ratio of one Holdfast window to the peer's window beside it "
           "(throughput, or p99): how far the host's drift moves the figure within this run.\n\n"
        << "| goal | measured | per round | bound | met |\n|---|---:|---:|---:|:---:|\n";
    for (const Row& row : rows) {
      out << "| " << row.goal << " | " << (row.value ? fmt(*row.value, 2) : "–") << " | "
          << (row.rounds ? fmt(row.rounds->low, 2) + "–" + fmt(row.rounds->high, 2) : "–") << " | "
          << (row.at_least ? "≥ " : "≤ ")
          << fmt(row.threshold, std::round(row.threshold * 10) == row.threshold * 10 ? 1 : 2)
          << " | ";
      if (!row.value)
        out << "n/a";
      else if (!row.unmet_because.empty())
        out << "**no** (" << row.unmet_because << ")";
      else
        out << ((row.at_least ? *row.value >= row.threshold : *row.value <= row.threshold)
                    ? "yes"
                    : "**no**");
      out << " |\n";
    }
    out << "| mutual-exclusion violations, all workloads (" << fmt_count(double(sections))
        << " sections checked) | " << violations << " | – | = 0 | "
        << (violations == 0 ? "yes" : "**no**") << " |\n\n";
    context_table(out, c);
  }

  // Figures that put goals in proportion: how close the peers themselves come to the floor,
  // how close each side alone would let Holdfast come, the comparison with PostgreSQL's
  // advisory locks where neither side writes to disk, and the hot key's critical sections per
  // round trip (a lock that its client releases needs one round trip to that client per
  // section, so about 1 is the ceiling).
  void context_table(std::ostream& out, int c) const {
    const std::string cs = std::to_string(c);
    std::vector<std::pair<std::string, std::optional<double>>> rows;
    if (const Measurement* f = floor_at(c); f != nullptr && find("pairs", "redis", c) != nullptr)
      rows.emplace_back("(a) " + cs + " conns: redis pairs ÷ PING+PING floor (" + f->target +
                            "): how close a peer comes",
                        ratio("pairs", "redis", *f, false));
    // The floor goal with one side taken away: each process's CPU per PING pair over its CPU
    // per lock pair is the ratio the floor goal could reach if the other process cost nothing.
    if (const Measurement* f = floor_at(c)) {
      if (const Measurement* h = find("pairs", kNever, c)) {
        const bool measured = f->ops > 0 && h->ops > 0;
        const auto ceiling = [measured](double ping_us, double lock_us) {
          return measured && lock_us > 0 ? std::optional(ping_us / lock_us) : std::nullopt;
        };
        rows.emplace_back("(a) " + cs +
                              " conns: never ÷ floor if the server took no time: the "
                              "load generator's CPU per PING pair ÷ per lock pair (polling left "
                              "out)",
                          ceiling(f->client_work_us_per_op(), h->client_work_us_per_op()));
        rows.emplace_back("(a) " + cs +
                              " conns: never ÷ floor if the load generator took no "
                              "time: the server's CPU per PING pair ÷ per lock pair",
                          ceiling(f->server_us_per_op(), h->server_us_per_op()));
      }
    }
    if (const Measurement* pg = find("pairs", "postgres", c))
      rows.emplace_back("(a) " + cs +
                            " conns: never ÷ postgres (advisory locks live in memory; "
                            "neither side writes to disk)",
                        ratio("pairs", kNever, *pg, false));
    if (const Measurement* f1 = floor_at(1); f1 != nullptr && f1->ops_per_sec > 0) {
      const double round_trips = 2 * f1->ops_per_sec;  // PING round trips/s, one connection
      for (const char* target : {kNever, "redis"}) {
        if (const Measurement* h = find("hotkey", target, r_.options.hot_connections))
          rows.emplace_back("(b) hot key: " + std::string(target) +
                                " critical sections per PING round trip on one connection (" +
                                f1->target + "); about 1 is the ceiling",
                            h->ops_per_sec / round_trips);
      }
    }
    if (rows.empty()) return;
    out << "Context for the goals, same run:\n\n| figure | ratio |\n|---|---:|\n";
    for (const auto& [what, value] : rows)
      out << "| " << what << " | " << (value ? fmt(*value, 2) : "–") << " |\n";
    out << "\n";
  }

 private:
  const SuiteResults& r_;
};

}  // namespace

std::string today() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

ReportFiles write_report(const SuiteResults& results, const std::filesystem::path& out_dir,
                         const std::string& date) {
  std::filesystem::create_directories(out_dir);
  ReportFiles files;
  files.markdown = out_dir / (date + ".md");
  files.throughput_chart = out_dir / (date + "-throughput.png");
  files.p99_chart = out_dir / (date + "-p99.png");
  files.charted = has_chart_figures(results);
  if (files.charted)
    files.chart_error = draw_charts(results, files.throughput_chart, files.p99_chart);

  const Writer w(results);
  std::ostringstream out;
  w.header(out, date);
  if (!files.charted) {
    out << "No charts: they draw (a), the floor and (c), and none of them ran.\n\n";
  } else if (files.chart_error.empty()) {
    out << "![throughput](" << files.throughput_chart.filename().string() << ")\n"
        << "![p99 latency](" << files.p99_chart.filename().string() << ")\n\n";
  } else {
    out << "Charts not drawn: " << files.chart_error << "\n\n";
  }
  w.goals_table(out);
  efficiency_goals_table(out, results);
  const std::string keys = fmt_count(double(results.options.keys));
  auto ms = [](std::int64_t us) {
    std::ostringstream s;
    s << double(us) / 1000 << " ms";
    return s.str();
  };
  const std::string backoff =
      results.options.backoff_min_us == results.options.backoff_max_us
          ? ms(results.options.backoff_min_us)
          : ms(results.options.backoff_min_us) + "→" + ms(results.options.backoff_max_us);
  const std::string hotkey_latency =
      "the wait for the lock, first attempt to grant (Holdfast: LOCK.ACQUIRE waits in the "
      "server's FIFO; PostgreSQL: pg_advisory_lock waits in the server's lock queue; the other "
      "peers: try, back off " +
      backoff + " with jitter); fairness is Jain's index over per-connection counts (1 = even)";
  w.streaming_table(out, "floor", "(f) Loopback floor: PING + PING", "pairs",
                    "one PING+PING pair, first sent to second answered");
  w.streaming_table(
      out, "pairs", "(a) Try-acquire + release pairs over " + keys + " keys", "pairs",
      "one pair, try queued to release answered; busy = tries that found the lock held");
  w.streaming_table(out, "pipeline",
                    "(c) Pipelined try-acquires, depth " + std::to_string(results.options.depth),
                    "tries", "one request, queued to answered (TTL 0.5 s, random keys)");
  w.streaming_table(out, "hotkey",
                    "(b) One hot key, " + std::to_string(results.options.hot_connections) +
                        " connections, critical sections back to back",
                    "sections", hotkey_latency);
  w.streaming_table(out, "sleeping", "(g) Pairs as in (a), with a client that sleeps at once",
                    "pairs", "one pair, try queued to release answered");
  w.streaming_table(out, "library",
                    "(m) Pairs as in (g), with a client shaped like a client library (each "
                    "request sent when epoll reports its socket writable)",
                    "pairs", "one pair, try queued to release answered");
  kinds_table(out, results);
  fanout_tables(out, results);
  handoff_table(out, results.handoffs);
  idle_table(out, results);
  tls_table(out, results);
  w.scaleout_table(out);
  w.memory_table(out);
  w.restart_table(out);

  std::ofstream f(files.markdown);
  f << out.str();
  if (!f) throw std::runtime_error("cannot write " + files.markdown.string());
  return files;
}

}  // namespace holdfast::bench
