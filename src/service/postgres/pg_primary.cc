#include "service/postgres/pg_primary.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace holdfast::pg {

const char kRoleSql[] = R"sql(SELECT pg_is_in_recovery(),
       current_setting('transaction_read_only') = 'on',
       CASE WHEN pg_is_in_recovery() THEN 0
            ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint
       END)sql";

ServerRole role_from(const Rows& rows) {
  ServerRole role;
  if (rows.empty()) return role;
  role.in_recovery = rows.boolean(0, 0);
  role.read_only = rows.boolean(0, 1);
  role.timeline = rows.number(0, 2);
  return role;
}

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    out.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

}  // namespace

Result<std::vector<ConnParams>> hosts_of(const std::string& url) {
  char* problem = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &problem);
  if (options == nullptr) {
    std::string message = problem != nullptr ? problem : "out of memory";
    if (problem != nullptr) PQfreemem(problem);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Error(ErrorCode::kInvalidArgument,
                 "the store URL " + redact_url(url) + " cannot be read: " + message);
  }
  std::vector<std::pair<std::string, std::string>> common;
  std::vector<std::string> hosts, addrs, ports;
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string key = o->keyword, value = o->val;
    if (key == "host") {
      hosts = split_list(value);
    } else if (key == "hostaddr") {
      addrs = split_list(value);
    } else if (key == "port") {
      ports = split_list(value);
    } else if (key != "target_session_attrs") {
      common.emplace_back(key, value);
    }
  }
  PQconninfoFree(options);
  const std::size_t n = std::max<std::size_t>({hosts.size(), addrs.size(), 1});
  auto mismatch = [&](const char* what, std::size_t count) {
    return Error(ErrorCode::kInvalidArgument, "the store URL " + redact_url(url) + " names " +
                                                  std::to_string(n) + " hosts but " +
                                                  std::to_string(count) + " " + what);
  };
  if (!hosts.empty() && hosts.size() != n) return mismatch("host names", hosts.size());
  if (!addrs.empty() && addrs.size() != n) return mismatch("host addresses", addrs.size());
  if (ports.size() > 1 && ports.size() != n) return mismatch("ports", ports.size());
  std::vector<ConnParams> out;
  for (std::size_t i = 0; i < n; ++i) {
    ConnParams p;
    p.settings = common;
    std::string host, port;
    if (!hosts.empty()) {
      host = hosts[i];
      p.settings.emplace_back("host", host);
    }
    if (!addrs.empty()) {
      if (host.empty()) host = addrs[i];
      p.settings.emplace_back("hostaddr", addrs[i]);
    }
    if (!ports.empty()) {
      port = ports.size() == 1 ? ports[0] : ports[i];
      p.settings.emplace_back("port", port);
    }
    p.label = (host.empty() ? std::string("localhost") : host) + (port.empty() ? "" : ":" + port);
    out.push_back(std::move(p));
  }
  return out;
}

Primary::Primary(Options options, std::vector<ConnParams> hosts)
    : options_(std::move(options)), hosts_(std::move(hosts)), probes_(hosts_.size()) {}

Result<std::unique_ptr<Primary>> Primary::open(Options options) {
  auto hosts = hosts_of(options.url);
  if (!hosts.ok()) return std::move(hosts).error();
  std::unique_ptr<Primary> primary(new Primary(std::move(options), std::move(*hosts)));
  if (primary->hosts_.size() == 1) return primary;  // no watchers: connect() checks the one host
  for (std::size_t i = 0; i < primary->hosts_.size(); ++i)
    primary->watchers_.emplace_back([p = primary.get(), i] { p->watch(i); });
  // The watchers' first answers, or the deadline.
  std::unique_lock lock(primary->mu_);
  primary->wake_.wait_for(lock, std::chrono::milliseconds(primary->options_.deadline_ms), [&] {
    return std::all_of(primary->probes_.begin(), primary->probes_.end(),
                       [](const Probe& p) { return p.answered || !p.error.empty(); });
  });
  if (!primary->current_) {
    std::string seen;
    for (std::size_t i = 0; i < primary->hosts_.size(); ++i) {
      const Probe& p = primary->probes_[i];
      seen += (seen.empty() ? "" : "; ") + primary->hosts_[i].label + ": ";
      if (!p.answered) {
        seen += p.error.empty() ? "no answer yet" : p.error;
      } else if (p.role.in_recovery) {
        seen += "a standby";
      } else if (p.role.read_only) {
        seen += "read-only";
      } else {
        seen += "a primary on timeline " + std::to_string(p.role.timeline);
      }
    }
    lock.unlock();
    return Error(ErrorCode::kUnavailable,
                 "no writable primary among the store URL's hosts (" + seen + ")");
  }
  return primary;
}

Primary::~Primary() { stop_watching(); }

void Primary::stop_watching() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stopped_ = 1;  // ends the watchers' waits on frozen servers at once
  wake_.notify_all();
  for (auto& t : watchers_)
    if (t.joinable()) t.join();
}

Deadline Primary::deadline(std::uint64_t epoch, Millis ms) const {
  Deadline d = Deadline::in(ms);
  d.epoch = &epoch_;
  d.epoch_seen = epoch;
  return d;
}

void Primary::watch(std::size_t host) {
  ConnParams params = hosts_[host];
  params.settings.emplace_back("application_name", "holdfast-probe");
  std::unique_ptr<PgConn> conn;
  std::uint64_t round = 0;
  for (;;) {
    Probe probe;
    // The watcher's own waits end early only when the node stops (the epoch moves then too,
    // but a change of primary must not cut a probe short: it may be the one that answers).
    Deadline by = Deadline::in(options_.deadline_ms);
    by.epoch = &stopped_;
    if (!conn || conn->broken()) {
      auto fresh = PgConn::connect(params, by);
      if (fresh.ok()) {
        conn = std::move(*fresh);
      } else {
        probe.error = fresh.error().message;
      }
    }
    if (conn) {
      auto rows = conn->exec(kRoleSql, by);
      if (rows.ok()) {
        probe.answered = true;
        probe.role = role_from(*rows);
      } else {
        probe.error = rows.error().message;
        conn.reset();
      }
    }
    bool changed = false;
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;
      probes_[host] = probe;
      changed = decide();
      wake_.notify_all();
    }
    if (changed && options_.on_change) options_.on_change();
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, std::chrono::milliseconds(options_.probe_ms),
                   [&] { return stopping_ || probe_round_ != round; });
    if (stopping_) return;
    round = probe_round_;
  }
}

bool Primary::decide() {
  bool changed = false;
  if (current_) {
    const Probe& now = probes_[*current_];
    if (now.answered && (now.role.in_recovery || now.role.read_only)) {
      spdlog::warn("the primary {} is now {}: no primary until another is found",
                   hosts_[*current_].label, now.role.in_recovery ? "a standby" : "read-only");
      current_.reset();
      epoch_ += 1;
      ++changes_;
      changed = true;
    }
  }
  std::int64_t best = -1;
  for (const Probe& p : probes_) {
    if (p.answered && !p.role.in_recovery && !p.role.read_only &&
        p.role.timeline >= newest_timeline_)
      best = std::max(best, p.role.timeline);
  }
  if (best < 0) return changed;
  std::vector<std::size_t> tops;
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    const Probe& p = probes_[i];
    if (p.answered && !p.role.in_recovery && !p.role.read_only && p.role.timeline == best)
      tops.push_back(i);
  }
  newest_timeline_ = std::max(newest_timeline_, best);
  if (current_ && std::find(tops.begin(), tops.end(), *current_) != tops.end()) return changed;
  if (tops.size() > 1) {
    spdlog::error(
        "{} servers of the store URL are writable primaries on timeline {}: not choosing one",
        tops.size(), best);
    return changed;
  }
  // A primary on a newer timeline than the current one's replaces it (a promotion); with none
  // current, the one found. Another writable server on the current timeline is not a
  // promotion: the current primary stays until it is lost.
  if (current_ && best <= current_timeline_) return changed;
  if (current_) {
    spdlog::warn("the primary moved from {} to {} (timeline {})", hosts_[*current_].label,
                 hosts_[tops[0]].label, best);
  } else {
    spdlog::info("the primary is {} (timeline {})", hosts_[tops[0]].label, best);
  }
  current_ = tops[0];
  current_timeline_ = best;
  epoch_ += 1;
  ++changes_;
  return true;
}

void Primary::lost(std::uint64_t epoch, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (epoch != epoch_.load() || stopping_) return;  // already moved on
    spdlog::warn("lost the primary{}: {}",
                 current_ ? " " + hosts_[*current_].label
                          : (hosts_.size() == 1 ? " " + hosts_[0].label : std::string()),
                 why);
    epoch_ += 1;
    ++changes_;
    if (hosts_.size() > 1) {
      current_.reset();
      // Only answers from now on count: a frozen server's last answer is stale.
      for (Probe& p : probes_) p = Probe{};
      ++probe_round_;
    }
  }
  wake_.notify_all();
}

Status Primary::verify(PgConn& conn, const Deadline& by) {
  auto rows = conn.exec(kRoleSql, by);
  if (!rows.ok()) return std::move(rows).error();
  const ServerRole role = role_from(*rows);
  auto refuse = [&](const std::string& why) {
    return Error(ErrorCode::kUnavailable,
                 "PostgreSQL at " + conn.label() + " " + why + ": not writing to it");
  };
  if (role.in_recovery) return refuse("is a standby (in recovery)");
  if (role.read_only) return refuse("is read-only (transaction_read_only is on)");
  std::lock_guard lock(mu_);
  if (role.timeline < newest_timeline_)
    return refuse("writes on timeline " + std::to_string(role.timeline) + ", older than timeline " +
                  std::to_string(newest_timeline_) + " seen before: it is an old primary");
  if (role.timeline > newest_timeline_ && newest_timeline_ != 0)
    spdlog::info("the primary {} writes on timeline {} now", conn.label(), role.timeline);
  newest_timeline_ = role.timeline;
  return ok_status();
}

Result<std::unique_ptr<PgConn>> Primary::connect() {
  ConnParams target;
  std::uint64_t epoch = 0;
  {
    std::lock_guard lock(mu_);
    epoch = epoch_.load();
    if (hosts_.size() == 1) {
      target = hosts_[0];
    } else if (current_) {
      target = hosts_[*current_];
    } else {
      return Error(ErrorCode::kUnavailable,
                   "no primary is known among the store URL's hosts yet (looking every " +
                       std::to_string(options_.probe_ms) + " ms)");
    }
  }
  const Deadline by = deadline(epoch);
  auto conn = PgConn::connect(target, by);
  if (!conn.ok()) return conn;
  (*conn)->epoch = epoch;
  (*conn)->set_default_timeout(options_.deadline_ms);
  if (auto st = verify(**conn, by); !st.ok()) {
    if (hosts_.size() > 1) lost(epoch, st.error().message);
    return std::move(st).error();
  }
  return conn;
}

Primary::View Primary::view() const {
  std::lock_guard lock(mu_);
  View v;
  if (hosts_.size() == 1) {
    v.host = hosts_[0].label;
  } else if (current_) {
    v.host = hosts_[*current_].label;
  }
  v.timeline = newest_timeline_;
  v.changes = changes_;
  return v;
}

}  // namespace holdfast::pg
