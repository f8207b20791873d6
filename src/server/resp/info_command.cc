// Server introspection in Redis's shapes: INFO, DBSIZE, TIME and a read-only CONFIG GET.
//
// INFO answers the sections client libraries and tools read (redis-cli --stat, ioredis's ready
// check reads `loading`), filled with Holdfast's own figures, plus a `holdfast` section.
// Figures Holdfast does not have are left out rather than made up. Lines end in CRLF, as
// Redis's do: redis-cli finds a field's end by looking for '\r'.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "core/glob.h"
#include "server/metrics.h"
#include "server/resp/ascii.h"
#include "server/resp/commands.h"
#include "server/resp/render.h"

namespace holdfast::resp {
namespace {

class InfoText {
 public:
  void section(std::string_view title) {
    if (!text_.empty()) text_ += "\r\n";
    text_ += "# ";
    text_ += title;
    text_ += "\r\n";
  }
  void line(std::string_view name, std::string_view value) {
    text_ += name;
    text_ += ':';
    text_ += value;
    text_ += "\r\n";
  }
  void line(std::string_view name, std::uint64_t value) { line(name, std::to_string(value)); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

std::string human_bytes(std::uint64_t n) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "K", "M", "G", "T"};
  double v = static_cast<double>(n);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < kUnits.size()) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.2f%s", v, kUnits[u]);
  return buf;
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string port_of(const std::string& address) {
  auto colon = address.rfind(':');
  return colon == std::string::npos ? std::string("0") : address.substr(colon + 1);
}

std::string host_of(const std::string& address) {
  auto colon = address.rfind(':');
  return colon == std::string::npos ? std::string() : address.substr(0, colon);
}

bool wanted(const std::vector<std::string>& sections, std::string_view name, bool in_default) {
  if (sections.empty()) return in_default;
  for (const auto& s : sections) {
    if (s == name || s == "all" || s == "everything" || (s == "default" && in_default)) return true;
  }
  return false;
}

std::string info_text(const CommandContext& ctx, const std::vector<std::string>& sections) {
  const ServiceStats stats = ctx.service.stats();
  const bool embedded = ctx.info.store != "postgres";
  InfoText out;
  if (wanted(sections, "server", true)) {
    const auto now = std::chrono::system_clock::now();
    const auto uptime =
        std::chrono::duration_cast<std::chrono::seconds>(now - ctx.info.started_at).count();
    utsname u{};
    ::uname(&u);
    char exe[4096];
    const ssize_t exe_len = ::readlink("/proc/self/exe", exe, sizeof exe);
    out.section("Server");
    // The Redis version whose commands and reply shapes Holdfast follows: clients compare it
    // before using RESP3 and Redis 7 command shapes.
    out.line("redis_version", "7.2.0");
    out.line("holdfast_version", ctx.info.version);
    out.line("redis_mode", "standalone");
    out.line("os", std::string(u.sysname) + " " + u.release + " " + u.machine);
    out.line("arch_bits", sizeof(void*) * 8);
    out.line("process_id", static_cast<std::uint64_t>(::getpid()));
    out.line("tcp_port", port_of(ctx.info.tcp_address));
    out.line(
        "server_time_usec",
        static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count()));
    out.line("uptime_in_seconds", static_cast<std::uint64_t>(uptime));
    out.line("uptime_in_days", static_cast<std::uint64_t>(uptime / 86400));
    out.line("executable",
             exe_len > 0 ? std::string(exe, static_cast<std::size_t>(exe_len)) : std::string());
  }
  if (wanted(sections, "clients", true)) {
    out.section("Clients");
    out.line("connected_clients", ctx.clients != nullptr ? ctx.clients->count() : 1);
    // Blocking acquires and assigns waiting in a key's queue (over RESP and HTTP).
    out.line("blocked_clients", stats.waiters);
  }
  if (wanted(sections, "memory", true)) {
    const struct mallinfo2 m = ::mallinfo2();
    const std::uint64_t used = m.uordblks + m.hblkhd;
    const std::uint64_t rss = resident_bytes();
    out.section("Memory");
    out.line("used_memory", used);
    out.line("used_memory_human", human_bytes(used));
    out.line("used_memory_rss", rss);
    out.line("used_memory_rss_human", human_bytes(rss));
    out.line("maxmemory", 0);  // no limit: holds are never evicted
    out.line("maxmemory_human", "0B");
    out.line("maxmemory_policy", "noeviction");
    out.line("mem_allocator", "libc");
  }
  if (wanted(sections, "persistence", true)) {
    out.section("Persistence");
    out.line("loading", 0);  // recovery finishes before the listeners open
    out.line("async_loading", 0);
    // The write-ahead log plays the part of Redis's append-only file; snapshots that of RDB.
    out.line("aof_enabled", embedded ? 1 : 0);
    out.line("aof_rewrite_in_progress", stats.store.snapshot_in_progress ? 1 : 0);
    out.line("rdb_bgsave_in_progress", stats.store.snapshot_in_progress ? 1 : 0);
  }
  if (wanted(sections, "stats", true)) {
    out.section("Stats");
    out.line("total_connections_received", ctx.clients != nullptr ? ctx.clients->accepted() : 1);
    out.line("total_commands_processed",
             ctx.metrics != nullptr ? ctx.metrics->observed(0, command_table().size()) : 0);
    out.line("expired_keys", stats.counters.expiries);
    out.line("evicted_keys", 0);
  }
  if (wanted(sections, "replication", true)) {
    out.section("Replication");
    out.line("role", "master");
    out.line("connected_slaves", 0);
  }
  if (wanted(sections, "cpu", true)) {
    rusage r{};
    ::getrusage(RUSAGE_SELF, &r);
    char sys[32], user[32];
    std::snprintf(sys, sizeof sys, "%ld.%06ld", static_cast<long>(r.ru_stime.tv_sec),
                  static_cast<long>(r.ru_stime.tv_usec));
    std::snprintf(user, sizeof user, "%ld.%06ld", static_cast<long>(r.ru_utime.tv_sec),
                  static_cast<long>(r.ru_utime.tv_usec));
    out.section("CPU");
    out.line("used_cpu_sys", sys);
    out.line("used_cpu_user", user);
  }
  if (wanted(sections, "keyspace", true)) {
    out.section("Keyspace");
    // Redis omits an empty database. Its expires= and avg_ttl= are not figures Holdfast keeps;
    // the keys' waiters are. Keys are held keys and keys holding a typed value.
    if (stats.held + stats.values > 0)
      out.line("db0", "keys=" + std::to_string(stats.held + stats.values) +
                          ",waiters=" + std::to_string(stats.waiters));
  }
  if (wanted(sections, "holdfast", true)) {
    out.section("Holdfast");
    out.line("node_mode", embedded ? "embedded" : "scale-out");
    out.line("store", embedded ? "wal" : "postgres");
    out.line("fsync", ctx.info.fsync);
    // 1 after an unclean stop in the horizon mode until nothing answered can still be held.
    out.line("recovering", stats.recovering_until > 0 ? 1 : 0);
    out.line("recovering_until_ms", stats.recovering_until);
    out.line("auth_mode", ctx.info.auth_mode ? "auth" : "open");
    out.line("holds", stats.held);
    out.line("typed_values", stats.values);
    out.line("waiters", stats.waiters);
    out.line("grants_total", stats.counters.grants);
    out.line("releases_total", stats.counters.releases);
    out.line("expiries_total", stats.counters.expiries);
    out.line("acquire_timeouts_total", stats.counters.timeouts);
    out.line("renewals_total", stats.counters.renewals);
    out.line("store_appends_total", stats.store.appended);
    if (const auto& r = stats.replication) {
      // docs/scale-out.md, "When PostgreSQL fails over".
      out.line("store_replication", r->state);
      out.line("store_replication_warning", r->warning);
      out.line("store_sync_standbys", std::to_string(r->sync_standbys));
      out.line("store_require_sync_replication", r->required ? 1 : 0);
      out.line("store_primary", r->primary);
      out.line("store_timeline", static_cast<std::uint64_t>(r->timeline));
      out.line("store_primary_changes", r->primary_changes);
      out.line("store_unsettled_writes", r->unsettled_writes);
    }
    if (embedded) {
      out.line("wal_syncs_total", stats.store.syncs);
      out.line("wal_bytes", stats.store.log_bytes);
      out.line("snapshots_total", stats.store.snapshots);
    }
  }
  return out.text();
}

// CONFIG GET's parameters: Redis's names for what Holdfast has, read-only.
std::vector<std::pair<std::string, std::string>> config_parameters(const ServerInfo& info) {
  const bool embedded = info.store != "postgres";
  return {
      {"appendfsync", info.fsync == "never" ? "no" : "always"},
      {"appendonly", embedded ? "yes" : "no"},
      {"bind", host_of(info.tcp_address)},
      {"databases", "1"},
      {"dir", info.data_dir},
      {"maxmemory", "0"},
      {"maxmemory-policy", "noeviction"},
      {"port", port_of(info.tcp_address)},
      {"save", ""},      // no RDB-style save points: the log makes every answered change durable
      {"timeout", "0"},  // idle connections are never closed
      {"unixsocket", info.unix_path},
  };
}

}  // namespace

Flow cmd_info(CommandContext& ctx, std::span<const std::string_view> args) {
  std::vector<std::string> sections;
  for (auto a : args) sections.push_back(ascii_lower(a));
  ctx.out.verbatim(info_text(ctx, sections));
  return Flow::kContinue;
}

Flow cmd_dbsize(CommandContext& ctx, std::span<const std::string_view>) {
  const ServiceStats stats = ctx.service.stats();
  ctx.out.integer(static_cast<std::int64_t>(stats.held + stats.values));
  return Flow::kContinue;
}

Flow cmd_time(CommandContext& ctx, std::span<const std::string_view>) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  ctx.out.array(2);
  ctx.out.bulk(std::to_string(us / 1'000'000));
  ctx.out.bulk(std::to_string(us % 1'000'000));
  return Flow::kContinue;
}

Flow cmd_config_get(CommandContext& ctx, std::span<const std::string_view> args) {
  std::vector<const std::pair<std::string, std::string>*> hits;
  const auto params = config_parameters(ctx.info);
  for (const auto& p : params) {
    for (auto pattern : args) {
      if (glob_match(ascii_lower(pattern), p.first)) {
        hits.push_back(&p);
        break;
      }
    }
  }
  ctx.out.map(hits.size());
  for (const auto* p : hits) ctx.out.field(p->first, p->second);
  return Flow::kContinue;
}

Flow cmd_config_set(CommandContext& ctx, std::span<const std::string_view>) {
  ctx.out.error_line(
      "ERR CONFIG SET is not supported: Holdfast reads its settings from holdfast.toml and flags");
  return Flow::kContinue;
}

}  // namespace holdfast::resp
