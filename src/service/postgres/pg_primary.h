// Primary: which server of the store URL takes writes now, and new connections to it. Every
// connection of a node (the pool, the heartbeat, LISTEN) is opened through it.
//
// The URL may name one server (a virtual IP, DNS name or proxy that follows the primary) or
// several (libpq's multi-host form, `host=a,b` or `postgresql://a:5432,b:5432/db`; its
// target_session_attrs is not needed: this class does that job, faster). Rules:
//  1. A connection is used only on a primary: every new one asks its server
//     pg_is_in_recovery(), transaction_read_only and the timeline it writes on, and is
//     refused unless it is a writable primary on the newest timeline this node has seen. A
//     promotion starts a new timeline, so an old primary that comes back (resumed after a
//     freeze, restarted without being rebuilt) is on an older one and never written to.
//  2. The epoch counts changes of primary. A connection belongs to the epoch it was opened
//     in; when the epoch moves on, every connection of an older one is dropped before its next
//     use, and a statement still waiting on one is abandoned (its Deadline says so), so a
//     failover costs one detection, not one per pooled connection.
//  3. The epoch moves on when a connection finds the primary gone (lost(): no answer by the
//     deadline, a broken connection, a server that turned read-only) and, with several hosts,
//     when a watcher finds a better primary. One watcher thread per host keeps a connection
//     of its own (application_name "holdfast-probe") and asks its server those three
//     questions every probe_ms (250 ms), and at once after a lost(). A standby that reports
//     itself promoted, on a newer timeline than the current primary's, becomes the primary
//     within one probe, whether the old primary died or is frozen (then its statements hang
//     and only a watcher on the other host can tell). A primary that turns into a standby or
//     read-only is dropped. Two writable servers on the newest timeline are ambiguous: the
//     current one is kept if it is one of them, else none is chosen until that is resolved.
//  4. With no primary known (after lost(), before a watcher finds one), connect() answers
//     UNAVAILABLE at once instead of waiting on a server that may be frozen.
// With one host there are no watchers: connect() connects to it and checks it (rule 1).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "service/postgres/pg_conn.h"

namespace holdfast::pg {

// The hosts a store URL names, each as its own connection parameters (libpq's
// target_session_attrs dropped: Primary checks the role itself). Errors name the URL's
// problem (e.g. three ports for two hosts).
Result<std::vector<ConnParams>> hosts_of(const std::string& url);

// The query every connection and watcher asks: in recovery, read-only, the timeline written on
// (a primary's from its current WAL file name, which a promotion moves at once).
extern const char kRoleSql[];
ServerRole role_from(const Rows& rows);

class Primary {
 public:
  struct Options {
    std::string url;
    Millis deadline_ms = 3'000;  // every round trip, connecting included
    Millis probe_ms = 250;
    std::function<void()> on_change;  // the primary changed (on a watcher thread)
  };
  // Parses the URL and finds the primary (waiting up to deadline_ms for the watchers' first
  // answers); an error when none is found.
  static Result<std::unique_ptr<Primary>> open(Options options);
  ~Primary();  // stop_watching()
  // Stops the watchers (no on_change after it returns); the primary last chosen stays.
  void stop_watching();
  Primary(const Primary&) = delete;
  Primary& operator=(const Primary&) = delete;

  // A new connection to the primary, checked (rule 1) and tagged with its epoch; statements
  // on it default to the deadline.
  Result<std::unique_ptr<PgConn>> connect();
  std::uint64_t epoch() const { return epoch_.load(); }
  // A round trip's deadline on a connection of `epoch`: deadline_ms from now, ended early when
  // the epoch moves on.
  Deadline deadline(std::uint64_t epoch) const { return deadline(epoch, options_.deadline_ms); }
  // The same, `ms` from now.
  Deadline deadline(std::uint64_t epoch, Millis ms) const;
  // A connection of `epoch` found the primary gone: the epoch moves on (once for that epoch)
  // and the watchers look again at once.
  void lost(std::uint64_t epoch, const std::string& why);
  Millis deadline_ms() const { return options_.deadline_ms; }

  struct View {
    std::string host;           // the current primary's host:port; empty when none is known
    std::int64_t timeline = 0;  // the newest timeline seen
    std::uint64_t changes = 0;  // times the primary changed or was lost since start
  };
  View view() const;

 private:
  struct Probe {
    bool answered = false;
    ServerRole role;
    std::string error;
  };
  explicit Primary(Options options, std::vector<ConnParams> hosts);
  void watch(std::size_t host);
  // After a watcher's answer: choose the primary (rule 3). Under mu_; true when it changed.
  bool decide();
  // Rule 1 for a fresh connection; the timeline it is on.
  Status verify(PgConn& conn, const Deadline& by);

  const Options options_;
  const std::vector<ConnParams> hosts_;
  std::atomic<std::uint64_t> epoch_{1};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::uint64_t probe_round_ = 0;  // moves on to make the watchers look now
  std::optional<std::size_t> current_;
  std::int64_t current_timeline_ = 0;
  std::atomic<std::uint64_t> stopped_{0};  // 1 once stopping: ends the watchers' waits
  std::int64_t newest_timeline_ = 0;
  std::uint64_t changes_ = 0;
  std::uint64_t lost_epoch_ = 0;  // the last epoch lost() ended
  std::vector<Probe> probes_;
  std::vector<std::thread> watchers_;
};

}  // namespace holdfast::pg
