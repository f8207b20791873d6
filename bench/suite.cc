// The benchmark suite: see suite.h for the order of a run.
#include "suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "clock.h"
#include "process.h"
#include "targets/etcd_target.h"
#include "targets/holdfast_pg_target.h"
#include "targets/holdfast_target.h"
#include "targets/postgres_target.h"
#include "targets/redis_target.h"
#include "workers.h"

namespace holdfast::bench {

namespace {

// Holds of the pipelined workload expire after this; short, so that a server is not still
// expiring them while the next one is measured.
constexpr std::uint32_t kPipelineTtlMs = 500;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The (d) load of a semaphore target: this many holders share one sorted set, so its figure is
// the memory of one member of a set of this size.
constexpr std::uint32_t kSemaphoreMemoryHolders = 64;

// `holders`: the semaphore targets' holders per key (targets/resp_client.h); 1 in every
// streaming workload, where each lock number is a semaphore of one permit.
std::unique_ptr<Target> make_target(const std::string& name, const SuiteOptions& o,
                                    std::uint32_t holders = 1) {
  if (name == "holdfast-never-tls")
    return std::make_unique<HoldfastTarget>(o.holdfast_binary, HoldfastFsync::kNever,
                                            o.holdfast_args, RespDialect::kHoldfast, true);
  if (name == "redis-tls") return make_redis_target(RedisPersistence::kNone, true);
  if (name == "holdfast-always" || name == "holdfast-never" || name == "holdfast-horizon" ||
      name == "holdfast-redis-always" || name == "holdfast-redis-never" ||
      name == "holdfast-sem-always" || name == "holdfast-sem-never") {
    const HoldfastFsync fsync = name.ends_with("always")  ? HoldfastFsync::kAlways
                                : name.ends_with("never") ? HoldfastFsync::kNever
                                                          : HoldfastFsync::kHorizon;
    const RespDialect dialect = name.starts_with("holdfast-redis") ? RespDialect::kRedis
                                : name.starts_with("holdfast-sem") ? RespDialect::kSemaphore
                                                                   : RespDialect::kHoldfast;
    return std::make_unique<HoldfastTarget>(o.holdfast_binary, fsync, o.holdfast_args, dialect,
                                            false, holders);
  }
  if (name == "redis") return make_redis_target(RedisPersistence::kNone);
  if (name == "redis-aof") return make_redis_target(RedisPersistence::kAofAlways);
  if (name == "redis-sem")
    return make_redis_target(RedisPersistence::kNone, false, RespDialect::kSemaphore, holders);
  if (name == "redis-sem-aof")
    return make_redis_target(RedisPersistence::kAofAlways, false, RespDialect::kSemaphore, holders);
  if (name == "postgres") return make_postgres_target(o.scripts_dir);
  if (name == "etcd") return make_etcd_target();
  if (const int nodes = holdfast_pg_nodes(name); nodes > 0)
    return std::make_unique<HoldfastPgTarget>(o.holdfast_binary, o.scripts_dir, nodes,
                                              o.holdfast_args, o.pg_commit_lanes);
  return nullptr;
}

// Progress goes to stderr as it happens: a full run takes minutes.
void say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void log_measurement(const Measurement& m) {
  if (m.failed) {
    std::fprintf(stderr, "  %-16s %-9s c=%-3d FAILED: %s\n", m.target.c_str(), m.workload.c_str(),
                 m.connections, m.failure.c_str());
    return;
  }
  const std::string workload = m.variant.empty() ? m.workload : m.workload + "/" + m.variant;
  const std::string writers =
      m.writer_ops == 0
          ? ""
          : "  writers " + std::to_string(std::lround(m.writer_ops_per_sec)) + " ops/s p99 " +
                std::to_string(std::lround(m.writer_p99_ns / 1e3)) + " us";
  std::fprintf(
      stderr,
      "  %-16s %-9s c=%-3d %10.0f ops/s  p50 %7.1f us  p99 %8.1f us  cpu cli %3.0f%% "
      "srv %3.0f%%%s%s%s\n",
      m.target.c_str(), workload.c_str(), m.connections, m.ops_per_sec,
      static_cast<double>(m.p50_ns) / 1e3, static_cast<double>(m.p99_ns) / 1e3, m.client_cpu_pct(),
      m.server_cpu_pct(), writers.c_str(),
      m.errors > 0 ? ("  errors " + std::to_string(m.errors) + ": " + m.first_error).c_str() : "",
      m.mutex.violations > 0 ? "  MUTUAL EXCLUSION VIOLATED" : "");
  std::fflush(stderr);
}

}  // namespace

bool is_semaphore_target(const std::string& name) {
  return name.starts_with("holdfast-sem-") || name.starts_with("redis-sem");
}

const std::vector<std::string>& all_target_names() {
  static const std::vector<std::string> names = {"holdfast-always",
                                                 "holdfast-never",
                                                 "holdfast-horizon",
                                                 "holdfast-redis-always",
                                                 "holdfast-redis-never",
                                                 "holdfast-never-tls",
                                                 "redis",
                                                 "redis-aof",
                                                 "redis-tls",
                                                 "holdfast-sem-always",
                                                 "holdfast-sem-never",
                                                 "redis-sem",
                                                 "redis-sem-aof",
                                                 "postgres",
                                                 "etcd"};
  return names;
}

std::vector<std::string> run_target_names(const SuiteOptions& o) {
  std::vector<std::string> names;
  for (const std::string& name : all_target_names()) {
    if (contains(o.targets, name)) names.push_back(name);
  }
  if (contains(o.targets, kScaleOutTarget)) {
    for (int n : o.pg_nodes) names.push_back(std::string(kScaleOutTarget) + std::to_string(n));
  }
  return names;
}

const std::vector<std::string>& all_workload_names() {
  static const std::vector<std::string> names = {
      "floor", "pairs", "pipeline", "hotkey",  "kinds",   "sleeping", "library",
      "idle",  "tls",   "watchers", "publish", "handoff", "memory",   "restart"};
  return names;
}

std::string workload_name(const std::string& n) {
  static const std::map<std::string, std::string> letters = {
      {"a", "pairs"},    {"b", "hotkey"},   {"c", "pipeline"}, {"d", "memory"}, {"e", "restart"},
      {"f", "floor"},    {"g", "sleeping"}, {"h", "idle"},     {"i", "kinds"},  {"j", "tls"},
      {"k", "watchers"}, {"l", "publish"},  {"m", "library"},  {"n", "handoff"}};
  if (auto it = letters.find(n); it != letters.end()) return it->second;
  return contains(all_workload_names(), n) ? n : "";
}

SuiteResults run_suite(const SuiteOptions& o) {
  SuiteResults results;
  results.options = o;
  const std::int64_t t0 = now_ns();
  TempDir root("holdfast-bench");
  if (o.keep_data) {
    root.keep();
    say("data folders kept under " + root.path().string());
  }
  auto wants = [&](const char* w) { return contains(o.workloads, w); };

  // Step 1.
  std::vector<std::unique_ptr<Target>> running;
  const bool streaming = wants("floor") || wants("pairs") || wants("pipeline") || wants("hotkey") ||
                         wants("kinds") || wants("sleeping") || wants("library") || wants("idle") ||
                         wants("tls") || wants("watchers") || wants("publish") || wants("handoff");
  for (const std::string& name : run_target_names(o)) {
    TargetInfo info{name, "", ""};
    auto target = make_target(name, o);
    info.description = target->description();
    if (streaming) {
      say("starting " + name);
      try {
        const auto dir = root.path() / name;
        std::filesystem::create_directories(dir);
        target->start(dir);
        info.description = target->description();
        running.push_back(std::move(target));
      } catch (const std::exception& e) {
        info.failure = e.what();
        say("  " + name + " failed to start: " + info.failure);
      }
    }
    results.targets.push_back(info);
  }

  // One figure per target and leg at `shape`, each made of o.rounds windows: every round runs
  // each leg's windows across its targets in turn (see accumulate()), so window k of every
  // figure comes from round k, next to window k of the others.
  struct Leg {
    std::string workload;
    std::function<bool(const Target&)> applies;
    std::function<WorkerFactory(const Target&)> factory;
    std::string variant = {};  // Measurement::variant of its figures
    // Started before each window and stopped after it (the watchers of (j)); may be empty.
    std::function<std::unique_ptr<Watchers>(Target&)> beside = {};
    bool library_client = false;  // (m): the client in the library shape
  };
  auto figures_of = [&](const std::vector<Leg>& legs, MeasureShape shape,
                        std::chrono::milliseconds pause_after) {
    shape.duration_s = o.duration_s / o.rounds;
    shape.warmup_s = o.warmup_s / o.rounds;
    struct Slot {
      const Leg* leg;
      Target* target;
      Measurement total;
    };
    std::vector<Slot> slots;
    for (const Leg& leg : legs) {
      for (auto& t : running) {
        if (leg.applies(*t)) slots.push_back({&leg, t.get(), {}});
      }
    }
    for (int round = 0; round < o.rounds && !interrupted(); ++round) {
      for (std::size_t i = 0; i < slots.size() && !interrupted(); ++i) {
        Slot& slot = slots[i];
        Measurement window;
        try {
          auto beside =
              slot.leg->beside ? slot.leg->beside(*slot.target) : std::unique_ptr<Watchers>();
          MeasureShape leg_shape = shape;
          leg_shape.library_client = slot.leg->library_client;
          window =
              measure(*slot.target, slot.leg->workload, leg_shape, slot.leg->factory(*slot.target));
          if (beside) {
            window.events_made = beside->events_made();
            window.watchers_dropped = beside->dropped();
          }
        } catch (const std::exception& e) {
          window.workload = slot.leg->workload;
          window.target = slot.target->name();
          window.connections = shape.connections;
          window.failed = true;
          window.failure = e.what();
        }
        window.variant = slot.leg->variant;
        accumulate(slot.total, window);
        // Let what this window left behind (expiring holds) settle before the next server is
        // timed on the same two cores.
        std::this_thread::sleep_for(pause_after);
      }
    }
    for (auto& slot : slots) {
      if (slot.total.rounds == 0 && !slot.total.failed) continue;  // interrupted before it ran
      log_measurement(slot.total);
      results.measurements.push_back(std::move(slot.total));
    }
  };
  auto figures = [&](const std::string& workload, MeasureShape shape,
                     const std::function<bool(const Target&)>& applies,
                     const std::function<WorkerFactory(const Target&)>& factory,
                     std::chrono::milliseconds pause_after) {
    figures_of({{workload, applies, factory}}, shape, pause_after);
  };
  // The TLS targets take part in (j) only, beside the same servers over plain TCP; the semaphore
  // targets (redis-semaphore's recipe) in (a) and (d) only.
  auto all = [](const Target& t) { return !t.tls() && !is_semaphore_target(t.name()); };
  auto resp_only = [](const Target& t) {
    return t.speaks_resp() && !t.tls() && !is_semaphore_target(t.name());
  };
  MeasureShape base{1, 1, o.warmup_s, o.duration_s, o.client_poll_us};
  if (o.smoke) base.until_one_op_s = 60;
  const std::chrono::milliseconds no_pause(0);

  // Step 2. The floor runs once per server implementation: PING does not touch persistence.
  // With (a) it runs in (a)'s rounds, each round's PING windows right before its pairs
  // windows: the floor goal is then a ratio of windows taken side by side, like the others.
  auto floor_wanted = [&](const Target& t) {
    if (!t.speaks_resp() || t.tls() || t.name().starts_with("holdfast-redis") ||
        is_semaphore_target(t.name()))
      return false;
    if (t.name() == "redis-aof") return !contains(o.targets, "redis");
    if (t.name() == "holdfast-always") return !contains(o.targets, "holdfast-never");
    return true;
  };
  const Leg floor_leg{"floor", floor_wanted, [](const Target&) { return ping_pair_worker(); }};
  const WorkerFactory pairs = pairs_worker({o.keys, 10'000});
  const Leg pairs_leg{"pairs", [](const Target& t) { return !t.tls(); },
                      [&](const Target&) { return pairs; }};
  if (wants("floor") || wants("pairs")) {
    std::vector<Leg> legs;
    if (wants("floor")) legs.push_back(floor_leg);
    if (wants("pairs")) legs.push_back(pairs_leg);
    const std::string pairs_title =
        "(a) try-acquire + release pairs over " + std::to_string(o.keys) + " keys";
    if (!wants("pairs"))
      say("(f) loopback floor: PING+PING pairs");
    else if (wants("floor"))
      say("(f) loopback floor and " + pairs_title + ", in the same rounds");
    else
      say(pairs_title);
    for (int c : o.connections) {
      MeasureShape s = base;
      s.connections = c;
      figures_of(legs, s, no_pause);
    }
  }
  if (wants("pipeline")) {
    say("(c) pipelined try-acquires, depth " + std::to_string(o.depth));
    const PipelineParams params{o.depth, kPipelineTtlMs};
    const WorkerFactory pipeline = pipeline_worker(params);
    for (int c : o.connections) {
      MeasureShape s = base;
      s.connections = c;
      s.depth = o.depth;
      figures(
          "pipeline", s, resp_only, [&](const Target&) { return pipeline; },
          o.smoke ? no_pause : std::chrono::milliseconds(kPipelineTtlMs + 300));
    }
  }
  if (wants("hotkey")) {
    say("(b) one hot key, " + std::to_string(o.hot_connections) + " connections");
    MeasureShape s = base;
    s.connections = o.hot_connections;
    figures(
        "hotkey", s, all,
        [&](const Target& t) {
          HotKeyParams params;
          params.blocking = t.supports_blocking_acquire();
          params.think_ns = o.think_us * 1000;
          params.backoff_min_ns = o.backoff_min_us * 1000;
          params.backoff_max_ns = o.backoff_max_us * 1000;
          return hot_key_worker(params);
        },
        no_pause);
  }

  if (wants("kinds")) {
    say("(i) lock kinds on one hot key, " + std::to_string(o.hot_connections) +
        " connections: exclusive, readers and writers (one in " + std::to_string(o.writer_every) +
        " a writer), a semaphore of " + std::to_string(o.semaphore_permits) + " permits");
    // Holdfast's own server only: the peers have no such modes, and a node over PostgreSQL
    // does not have them yet.
    auto embedded = [](const Target& t) {
      return t.supports_blocking_acquire() && t.name().starts_with("holdfast-") &&
             !t.name().starts_with("holdfast-pg") && !t.tls();
    };
    HotKeyParams exclusive;
    exclusive.blocking = true;
    KindParams shared;
    shared.kind = KindParams::Kind::kShared;
    shared.writer_every = o.writer_every;
    KindParams semaphore;
    semaphore.kind = KindParams::Kind::kSemaphore;
    semaphore.permits = static_cast<std::uint32_t>(o.semaphore_permits);
    MeasureShape s = base;
    s.connections = o.hot_connections;
    figures_of(
        {{"kinds", embedded, [=](const Target&) { return hot_key_worker(exclusive); }, "exclusive"},
         {"kinds", embedded, [=](const Target&) { return kind_worker(shared); }, "shared"},
         {"kinds", embedded, [=](const Target&) { return kind_worker(semaphore); }, "semaphore"}},
        s, no_pause);
  }

  if (wants("watchers")) {
    say("(k) pairs as in (a) at " + std::to_string(o.watch_connections) + " connections, with no " +
        "lock-event watcher, with 1 and with " + std::to_string(o.watchers) +
        " LOCK.WATCH connections, and with 1 that never reads, in the same rounds; then " +
        std::to_string(o.watchers) +
        " LOCK.WATCH connections beside as many GET /v1/events streams");
    auto embedded = [](const Target& t) {
      return t.name() == "holdfast-always" || t.name() == "holdfast-never";
    };
    const int watchers = o.watchers;
    auto reading = [](int count, Readers kind, double open_after_s = 0) {
      return [=](Target& t) { return std::make_unique<Watchers>(t, count, kind, open_after_s); };
    };
    auto pairs_of = [&](const Target&) { return pairs; };
    MeasureShape s = base;
    s.connections = o.watch_connections;
    // Nobody watching, one and many watches, in the same rounds. A LOCK.WATCH cannot resume,
    // so once the last one closes the server makes no event (events.md): the windows without
    // a watcher measure the lock path with events off, which the events counter confirms.
    std::vector<Leg> legs{
        {"watchers", embedded, pairs_of, "0 watchers", reading(0, Readers::kWatches)}};
    if (watchers != 1)
      legs.push_back({"watchers", embedded, pairs_of, "1 watchers", reading(1, Readers::kWatches)});
    legs.push_back({"watchers", embedded, pairs_of, std::to_string(watchers) + " watchers",
                    reading(watchers, Readers::kWatches)});
    // A watch that never reads opens as its window's warm-up ends, so the window holds its
    // whole life: the server fills it, cuts it off, and goes on without events.
    legs.push_back({"watchers", embedded, pairs_of, "1 stalled",
                    reading(1, Readers::kStalled, o.warmup_s / o.rounds)});
    figures_of(legs, s, no_pause);
    // Streams keep events on for a minute after they close (a page that reconnects resumes),
    // so they run after the windows without a watcher, beside the same number of watches.
    figures_of({{"watchers", embedded, pairs_of, std::to_string(watchers) + " watchers, again",
                 reading(watchers, Readers::kWatches)},
                {"watchers", embedded, pairs_of, std::to_string(watchers) + " streams",
                 reading(watchers, Readers::kStreams)}},
               s, no_pause);
  }
  if (wants("publish")) {
    say("(l) PUBLISH to " + std::to_string(o.subscribers) + " subscribers, " +
        std::to_string(o.publish_depth) + " in flight");
    PublishShape shape;
    shape.subscribers = o.subscribers;
    shape.depth = o.publish_depth;
    shape.duration_s = o.duration_s / o.rounds;
    shape.warmup_s = o.warmup_s / o.rounds;
    std::vector<std::pair<Target*, PublishResult>> slots;
    for (auto& t : running)
      if (t->name() == "holdfast-never" || t->name() == "holdfast-always" || t->name() == "redis")
        slots.push_back({t.get(), {}});
    for (int round = 0; round < o.rounds && !interrupted(); ++round)
      for (auto& [target, total] : slots) publish_window(*target, shape, total);
    for (auto& [target, total] : slots) {
      if (total.failed)
        std::fprintf(stderr, "  %-16s publish FAILED: %s\n", total.target.c_str(),
                     total.failure.c_str());
      else
        std::fprintf(stderr, "  %-16s publish %10.0f messages/s delivered  srv %.2f us/message\n",
                     total.target.c_str(), total.delivered_per_sec(),
                     total.server_us_per_message());
      results.publish.push_back(std::move(total));
    }
  }

  if (wants("handoff")) {
    say("(n) hand-off latency: a waiter blocked on a key, from the holder's release to its "
        "grant, one at a time");
    auto report = [&](HandoffResult r) {
      if (!r.failure.empty())
        std::fprintf(stderr, "  %-16s handoff %-18s FAILED: %s\n", r.target.c_str(), r.path.c_str(),
                     r.failure.c_str());
      else
        std::fprintf(stderr, "  %-16s handoff %-18s p50 %9.1f us  p99 %9.1f us\n", r.target.c_str(),
                     r.path.c_str(), r.quantile(0.5), r.quantile(0.99));
      results.handoffs.push_back(std::move(r));
    };
    for (auto& t : running) {
      if (interrupted()) break;
      const std::string name = t->name();
      if (name == "postgres") {
        report(advisory_handoffs(t->sql_conninfo(), o.handoffs, name));
      } else if (name == "holdfast-always" || name == "holdfast-never") {
        report(resp_handoffs(t->resp_port(), t->resp_port(), o.handoffs, name, "one server"));
      } else if (holdfast_pg_nodes(name) > 0) {
        const std::vector<std::uint16_t> ports = t->resp_ports();
        report(resp_handoffs(ports[0], ports[0], o.handoffs, name, "one node"));
        if (ports.size() > 1)
          report(resp_handoffs(ports[0], ports[1], o.handoffs, name, "node 1 → node 2"));
      }
    }
  }

  // The efficiency goals compare the embedded server (its commands and the Redis idiom) with
  // Redis, each durability with its own.
  auto efficiency_target = [](const Target& t) {
    return t.name() == "holdfast-always" || t.name() == "holdfast-never" ||
           t.name() == "holdfast-redis-always" || t.name() == "holdfast-redis-never" ||
           t.name() == "redis" || t.name() == "redis-aof";
  };
  // (g) and (m), the same pairs from two shapes of client, share their rounds.
  if (wants("sleeping") || wants("library")) {
    say("(g)/(m) try-acquire + release pairs over " + std::to_string(o.keys) +
        " keys, a client that sleeps at once: tuned (g), library-shaped (m)");
    std::vector<Leg> legs;
    if (wants("sleeping"))
      legs.push_back({"sleeping", efficiency_target, [&](const Target&) { return pairs; }});
    if (wants("library")) {
      legs.push_back({"library", efficiency_target, [&](const Target&) { return pairs; }});
      legs.back().library_client = true;
    }
    for (int c : o.sleeping_connections) {
      MeasureShape s = base;
      s.connections = c;
      s.client_poll_us = 0;
      figures_of(legs, s, no_pause);
    }
  }
  if (wants("idle")) {
    say("(h) " + std::to_string(o.idle.connections) + " idle connections and " +
        std::to_string(o.idle.holds) + " holds for " + std::to_string(std::lround(o.idle.idle_s)) +
        " s, then a pair every " + std::to_string(o.idle.period_ms) + " ms, in " +
        std::to_string(o.idle.paced_windows) + " windows");
    // Each target's idle window in turn; then the paced windows in rounds across the targets,
    // so that a paced ratio compares the same minutes of the host.
    std::vector<std::unique_ptr<QuietServer>> quiet;
    for (auto& t : running) {
      if (interrupted() || !efficiency_target(*t)) continue;
      quiet.push_back(std::make_unique<QuietServer>(*t, o.idle));
    }
    for (int round = 0; round < o.idle.paced_windows && !interrupted(); ++round)
      for (auto& q : quiet) q->paced_window(o.idle.paced_s / o.idle.paced_windows);
    for (auto& q : quiet) {
      const IdleResult& r = q->result();
      if (r.failed)
        std::fprintf(stderr, "  %-16s FAILED: %s\n", r.target.c_str(), r.failure.c_str());
      else
        std::fprintf(stderr, "  %-16s idle cpu %5.2f%%  paced cpu %5.2f%% (%llu pairs)\n",
                     r.target.c_str(), r.idle_pct(), r.paced_pct(),
                     static_cast<unsigned long long>(r.paced_pairs));
      results.idle.push_back(r);
    }
  }

  if (wants("tls")) {
    say("(j) the pairs of (a) over TLS, beside the same servers over plain TCP, connections "
        "reused");
    auto tls_leg = [](const Target& t) {
      const std::string n = t.name();
      return n == "holdfast-never" || n == "holdfast-never-tls" || n == "redis" || n == "redis-tls";
    };
    const Leg leg{"tls", tls_leg, [&](const Target&) { return pairs; }};
    for (int c : o.tls_connections) {
      MeasureShape s = base;
      s.connections = c;
      figures_of({leg}, s, no_pause);
    }
  }

  // Step 3.
  for (auto& t : running) t->stop();
  running.clear();

  auto fresh = [&](const std::string& name, std::uint32_t holders = 1) -> std::unique_ptr<Target> {
    auto t = make_target(name, o, holders);
    const auto dir = root.path() / (name + "-fresh-" + std::to_string(now_ns()));
    std::filesystem::create_directories(dir);
    t->start(dir);
    return t;
  };
  auto started_ok = [&](const std::string& name) {
    for (const auto& ti : results.targets) {
      if (ti.name == name) return ti.failure.empty();
    }
    return false;
  };

  if (wants("memory") && !interrupted()) {
    say("(d) memory per held lock, " + std::to_string(o.memory_holds) + " holds");
    // Memory does not depend on fsync: one Holdfast and Redis without persistence.
    std::vector<std::string> names;
    if (contains(o.targets, "holdfast-never"))
      names.push_back("holdfast-never");
    else if (contains(o.targets, "holdfast-always"))
      names.push_back("holdfast-always");
    if (contains(o.targets, "redis"))
      names.push_back("redis");
    else if (contains(o.targets, "redis-aof"))
      names.push_back("redis-aof");
    // And per member of redis-semaphore's sorted sets, kSemaphoreMemoryHolders to a set.
    if (contains(o.targets, "holdfast-sem-never"))
      names.push_back("holdfast-sem-never");
    else if (contains(o.targets, "holdfast-sem-always"))
      names.push_back("holdfast-sem-always");
    if (contains(o.targets, "redis-sem"))
      names.push_back("redis-sem");
    else if (contains(o.targets, "redis-sem-aof"))
      names.push_back("redis-sem-aof");
    for (const auto& name : names) {
      if (interrupted() || (streaming && !started_ok(name))) continue;
      MemoryResult m;
      try {
        auto t = fresh(name, is_semaphore_target(name) ? kSemaphoreMemoryHolders : 1);
        m = measure_memory(*t, o.memory_holds, o.smoke ? 100 : 1000);
      } catch (const std::exception& e) {
        m.target = name;
        m.failed = true;
        m.failure = e.what();
      }
      std::fprintf(stderr, "  %-16s %s\n", name.c_str(),
                   m.failed
                       ? ("FAILED: " + m.failure).c_str()
                       : (std::to_string(std::lround(m.bytes_per_hold)) + " bytes/hold").c_str());
      results.memory.push_back(std::move(m));
    }
  }

  if (wants("restart") && !interrupted()) {
    const std::string name = "holdfast-" + o.restart_fsync;
    const bool selected = contains(o.targets, "holdfast-always") ||
                          contains(o.targets, "holdfast-never") ||
                          contains(o.targets, "holdfast-horizon");
    if (selected) {
      say("(e) restart with " + std::to_string(o.restart_holds) + " holds (" + name + ")");
      RestartResult r;
      try {
        auto t = fresh(name);
        r = measure_restart(static_cast<HoldfastTarget&>(*t), o.restart_holds);
      } catch (const std::exception& e) {
        r.failed = true;
        r.failure = e.what();
      }
      r.target = name;
      std::fprintf(stderr, "  %-16s %s\n", name.c_str(),
                   r.failed ? ("FAILED: " + r.failure).c_str()
                            : (std::to_string(std::lround(r.restart_ms)) + " ms, " +
                               std::to_string(r.still_held) + "/" + std::to_string(r.sampled) +
                               " sampled holds survived")
                                  .c_str());
      results.restarts.push_back(std::move(r));
    }
  }

  results.interrupted = interrupted();
  results.wall_seconds = static_cast<double>(now_ns() - t0) / kNsPerSec;
  return results;
}

std::vector<std::string> smoke_problems(const SuiteResults& r) {
  std::vector<std::string> problems;
  if (r.interrupted) problems.push_back("the run was interrupted");
  for (const auto& t : r.targets) {
    if (!t.failure.empty()) problems.push_back(t.name + " did not start: " + t.failure);
  }
  // A workload must have produced a figure when some selected target can run it.
  auto selected = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* n) { return contains(r.options.targets, n); });
  };
  const bool any_holdfast = selected({"holdfast-always", "holdfast-never"});
  const bool any_resp = any_holdfast || selected({"redis", "redis-aof"});
  for (const auto& w : r.options.workloads) {
    const bool efficiency = selected({"holdfast-always", "holdfast-never", "redis", "redis-aof"});
    const bool applicable =
        w == "restart"    ? any_holdfast
        : w == "kinds"    ? selected({"holdfast-always", "holdfast-never", "holdfast-horizon"})
        : w == "tls"      ? selected({"holdfast-never-tls", "redis-tls"})
        : w == "watchers" ? any_holdfast
        : w == "publish"  ? any_resp
        : w == "handoff"  ? any_holdfast || selected({"postgres", kScaleOutTarget})
        : (w == "sleeping" || w == "library" || w == "idle") ? efficiency
        : (w == "floor" || w == "pipeline")                  ? any_resp
        : w == "memory"                                      ? any_resp
                                                             : !r.options.targets.empty();
    const bool ran = (w == "memory" && !r.memory.empty()) || (w == "idle" && !r.idle.empty()) ||
                     (w == "publish" && !r.publish.empty()) ||
                     (w == "handoff" && !r.handoffs.empty()) ||
                     (w == "restart" && !r.restarts.empty()) ||
                     std::any_of(r.measurements.begin(), r.measurements.end(),
                                 [&](const Measurement& m) { return m.workload == w; });
    if (applicable && !ran) problems.push_back("workload " + w + " produced no figure");
  }
  for (const auto& m : r.measurements) {
    const std::string where =
        m.workload + " on " + m.target + " at " + std::to_string(m.connections) + " connections: ";
    if (m.failed) {
      problems.push_back(where + m.failure);
      continue;
    }
    if (m.errors > 0)
      problems.push_back(where + std::to_string(m.errors) + " errors, first: " + m.first_error);
    if (m.ops == 0 || !std::isfinite(m.ops_per_sec))
      problems.push_back(where + "no operation completed");
    if (m.ops > 0 && !(m.p50_ns > 0 && m.p50_ns <= m.p99_ns && m.p99_ns <= m.p999_ns)) {
      problems.push_back(where + "latency percentiles out of order");
    }
    // Leases are 10 s and sections microseconds: a release answered "not yours" means a reply
    // was misread or a lock was lost.
    if (m.not_held > 0)
      problems.push_back(where + std::to_string(m.not_held) + " releases answered not-held");
    if (m.mutex.violations > 0) {
      problems.push_back(where + std::to_string(m.mutex.violations) +
                         " mutual-exclusion violations, first: " + m.mutex.first_violation);
    }
  }
  for (const auto& m : r.memory) {
    if (m.failed)
      problems.push_back("memory on " + m.target + ": " + m.failure);
    else if (m.rss_before <= 0 || m.rss_after <= 0)
      problems.push_back("memory on " + m.target + ": RSS unreadable");
  }
  for (const auto& x : r.idle) {
    if (x.failed) problems.push_back("idle on " + x.target + ": " + x.failure);
  }
  for (const auto& x : r.publish) {
    if (x.failed)
      problems.push_back("publish on " + x.target + ": " + x.failure);
    else if (x.delivered == 0)
      problems.push_back("publish on " + x.target + ": nothing delivered");
  }
  for (const auto& x : r.handoffs) {
    if (!x.failure.empty())
      problems.push_back("handoff on " + x.target + " (" + x.path + "): " + x.failure);
    else if (x.us.empty())
      problems.push_back("handoff on " + x.target + " (" + x.path + "): none measured");
  }
  for (const auto& x : r.restarts) {
    // Whether holds survive is the durability work's contract, reported in the restart table;
    // the smoke test asks only that the restart ran.
    if (x.failed) problems.push_back("restart on " + x.target + ": " + x.failure);
  }
  return problems;
}

}  // namespace holdfast::bench
