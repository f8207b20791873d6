// Fuzzes the RESP commands of one node end to end, without sockets: parsed requests go through
// the command table to an EmbeddedService (lock table, rules, rate limits, waiters) over a
// MemoryStore, with a fake clock, for three connections. Any input must leave the server
// answering: no crash, no undefined behaviour, a reply to every command that does not block,
// and a waiter's outcome only for a connection that is blocked. And fencing must hold: the
// tokens that lock replies show for a key never go down.
//
// With the write-ahead log (bit 2 of the first byte) the store is a WalStore on an in-memory
// file system, snapshotting every 4 KiB of log; at the end of the input the connections close,
// the store closes, and a new one recovers from the files: it must find exactly the holds, the
// token high-water mark and the rule set that the running server had.
//
// The first input byte picks the setup: bit 0 auth mode (credentials below; connections must
// AUTH), bit 1 a rate limit of 20 acquire attempts per user per hour, bit 2 the log. The rest is a
// RESP stream. Three pseudo-commands steer the harness: FUZZ.CONN n (later commands come from
// connection n % 3), FUZZ.TICK ms (the clock moves on, lease ends and timeouts run),
// FUZZ.CLOSE (the current connection goes away and a new one takes its place). Handles are
// random, so an argument "$H" stands for the last handle any reply carried. With
// HOLDFAST_FUZZ_ECHO set, every reply is printed (to see what a seed does).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth/credentials.h"
#include "core/clock.h"
#include "core/validation.h"
#include "server/embedded_service.h"
#include "server/resp/commands.h"
#include "store/memory_store.h"
#include "store/wal/fake_file_system.h"
#include "store/wal/wal_store.h"

namespace {

using namespace holdfast;
using namespace holdfast::resp;

std::unique_ptr<CredentialStore> open_credentials() {
  const std::string path = "/tmp/holdfast-commands-fuzz-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << "[[member]]\nuserId = \"alice\"\ngroups = [\"ops/core\"]\ntokenSha256 = \""
                      << to_hex(sha256("alice-secret"))
                      << "\"\n[[member]]\nuserId = \"root\"\nrole = \"admin\"\ntokenSha256 = \""
                      << to_hex(sha256("root-secret"))
                      << "\"\n[[function]]\nname = \"importer\"\ntokenSha256 = \""
                      << to_hex(sha256("fn-secret")) << "\"\n";
  auto store = CredentialStore::open(path);
  ::unlink(path.c_str());
  if (!store.ok()) std::abort();
  return std::move(*store);
}

const CredentialStore& credentials() {
  static const std::unique_ptr<CredentialStore> store = open_credentials();
  return *store;
}

struct FuzzConnection final : WaiterClient {
  ConnectionState state;
  std::string out;       // replies to commands
  std::string outcomes;  // replies to blocked commands, written when their waiter ends
  bool blocked = false;
  WaiterId blocked_on = 0;

  void on_waiter_outcome(const WaiterOutcome& outcome) override {
    if (!blocked) std::abort();  // outcomes go only to connections that wait
    ReplyWriter writer(outcomes, state.proto);
    write_waiter_outcome(writer, outcome);
    blocked = false;
    blocked_on = 0;
  }
};

class Node {
 public:
  Node(bool auth, bool rate_limited, bool wal)
      : auth_(auth),
        store_(wal ? std::unique_ptr<Store>(
                         std::make_unique<wal::WalStore>(wal_options(), clock_, fs_))
                   : std::make_unique<MemoryStore>()),
        service_(clock_, *store_, options(rate_limited)) {
    if (!service_.recover().ok()) std::abort();
    info_.version = "fuzz";
    info_.auth_mode = auth;
    for (auto& c : connections_) open(c);
  }

  ~Node() {
    if (!store_closed_) close_all();
  }

  // What a restart would recover must be what the server has now (log mode only).
  void check_restart() {
    close_all();
    const Millis now = clock_.now_ms();
    const DurableState live = service_.table().snapshot(now);
    const Principal owner = Principal::local_owner();
    auto live_rules = service_.get_rule_set(Caller{&owner, 0});
    if (!live_rules.ok()) std::abort();
    if (echo_)
      std::fprintf(stderr, "restart check: %zu holds, last token %llu, %llu snapshots\n",
                   live.holds.size(), static_cast<unsigned long long>(live.last_token),
                   static_cast<unsigned long long>(store_->stats().snapshots));
    store_->close();
    store_closed_ = true;

    wal::WalStore again(wal_options(), clock_, fs_);
    auto recovered = again.recover();
    if (!recovered.ok()) std::abort();  // the log the server wrote must read back
    LockTable table;
    table.restore(*recovered, now);
    const DurableState restored = table.snapshot(now);
    again.close();
    if (restored.last_token != live.last_token) std::abort();
    if (sorted(restored.holds) != sorted(live.holds)) std::abort();
    const auto& rules = *live_rules;
    if (rules.has_value() != recovered->rule_set.has_value()) std::abort();
    if (rules &&
        (rules->name != recovered->rule_set->name || rules->toml != recovered->rule_set->toml))
      std::abort();
  }

  void run(std::span<const std::string_view> raw) {
    std::vector<std::string_view> args(raw.begin(), raw.end());
    for (auto& a : args)
      if (a == "$H") a = last_handle_;
    FuzzConnection& c = connections_[current_];
    const std::string_view name = args[0];
    if (iequals(name, "FUZZ.CONN")) {
      const std::int64_t n = args.size() > 1 ? parse_int64(args[1]).value_or(0) : 0;
      current_ = static_cast<std::size_t>(n < 0 ? -(n + 1) : n) % connections_.size();
    } else if (iequals(name, "FUZZ.TICK")) {
      std::int64_t ms = 1;
      if (args.size() > 1) ms = parse_int64(args[1]).value_or(1);
      clock_.advance(ms < 0 || ms > 86'400'000 ? 1 : ms);
      service_.advance();
    } else if (iequals(name, "FUZZ.CLOSE")) {
      reopen(c);
    } else if (!c.blocked) {  // a blocked connection reads nothing until its outcome
      const std::size_t before = c.out.size();
      ReplyWriter writer(c.out, c.state.proto);
      CommandContext ctx{service_, c.state, writer, &c, info_, auth_ ? &credentials() : nullptr,
                         nullptr};
      const Flow flow = execute(ctx, args);
      if (name.size() > 5 && iequals(name.substr(0, 5), "LOCK.")) check_tokens(c.out);
      if (flow == Flow::kBlock) {
        if (ctx.blocked_on == 0) std::abort();
        c.blocked = true;
        c.blocked_on = ctx.blocked_on;
      } else if (c.out.size() == before) {
        std::abort();  // every command that does not block answers at once
      }
      if (flow == Flow::kClose) {
        reopen(c);
      }
    }
    service_.dispatch_outcomes();  // what the loop does after each event
    store_->submit();
    for (auto& each : connections_) {
      check_tokens(each.outcomes);
      each.out += each.outcomes;
      each.outcomes.clear();
      if (echo_ && !each.out.empty())
        std::fprintf(stderr, "[%zu] %s\n", static_cast<std::size_t>(&each - connections_.data()),
                     each.out.c_str());
      remember_handle(each.out);
      each.out.clear();
    }
  }

 private:
  static wal::WalOptions wal_options() {
    wal::WalOptions o;
    o.fsync = wal::FsyncMode::kNever;
    o.snapshot_threshold_bytes = 4096;
    o.segment_bytes = 16384;
    return o;
  }

  static std::vector<HoldState> sorted(std::vector<HoldState> holds) {
    std::sort(holds.begin(), holds.end(),
              [](const HoldState& a, const HoldState& b) { return a.key < b.key; });
    return holds;
  }

  static ServiceOptions options(bool rate_limited) {
    ServiceOptions o;
    if (rate_limited) o.acquire_per_user_per_hour = 20;
    return o;
  }

  static bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
    return true;
  }

  // Every (key, token) pair in lock replies: a map's "key" field and the "token" field that
  // follows it before the next map's key. A key's token must never go down.
  void check_tokens(std::string_view out) {
    static constexpr std::string_view kKey = "$3\r\nkey\r\n$";
    static constexpr std::string_view kToken = "$5\r\ntoken\r\n:";
    std::size_t at = out.find(kKey);
    while (at != std::string_view::npos) {
      std::size_t p = at + kKey.size();
      const std::size_t eol = out.find("\r\n", p);
      if (eol == std::string_view::npos) std::abort();
      const auto length = parse_int64(out.substr(p, eol - p));
      if (!length || eol + 2 + static_cast<std::size_t>(*length) > out.size()) std::abort();
      const std::string key(out.substr(eol + 2, static_cast<std::size_t>(*length)));
      p = eol + 2 + static_cast<std::size_t>(*length);
      const std::size_t next = out.find(kKey, p);
      const std::size_t token_at = out.find(kToken, p);
      if (token_at != std::string_view::npos && token_at < next) {
        const std::size_t start = token_at + kToken.size();
        const std::size_t end = out.find("\r\n", start);
        const auto token = parse_int64(out.substr(start, end - start));
        if (!token) std::abort();
        std::int64_t& seen = tokens_[key];
        if (*token < seen) std::abort();  // fencing broken: a key's token went down
        seen = *token;
      }
      at = next;
    }
  }

  void remember_handle(std::string_view out) {
    static constexpr std::string_view kMarker = "$6\r\nhandle\r\n$26\r\n";
    const std::size_t at = out.rfind(kMarker);
    if (at != std::string_view::npos && at + kMarker.size() + 26 <= out.size())
      last_handle_.assign(out.substr(at + kMarker.size(), 26));
  }

  void open(FuzzConnection& c) {
    c.state = ConnectionState{};
    c.state.id = ++last_session_;
    if (!auth_) {
      c.state.principal = Principal::local_owner();
      c.state.authenticated = true;
    }
    c.blocked = false;
    c.blocked_on = 0;
  }

  void close_all() {
    for (auto& c : connections_) close(c);
    service_.dispatch_outcomes();
  }

  // The connection goes away and a new one takes its place.
  void reopen(FuzzConnection& c) {
    close(c);
    open(c);
  }

  void close(FuzzConnection& c) {
    if (c.blocked) service_.cancel_waiter(c.blocked_on);
    c.blocked = false;
    service_.end_session(c.state.id);
  }

  bool auth_;
  bool store_closed_ = false;
  const bool echo_ = std::getenv("HOLDFAST_FUZZ_ECHO") != nullptr;  // replies to stderr
  FakeClock clock_;
  wal::FakeFileSystem fs_;
  std::unique_ptr<Store> store_;
  EmbeddedService service_;
  ServerInfo info_;
  std::array<FuzzConnection, 3> connections_;
  std::size_t current_ = 0;
  SessionId last_session_ = 0;
  std::string last_handle_;
  std::map<std::string, std::int64_t> tokens_;  // the highest token seen per key
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool wal = (data[0] & 4) != 0;
  Node node((data[0] & 1) != 0, (data[0] & 2) != 0, wal);
  ParserLimits limits;
  limits.max_frame_bytes = 4096;
  limits.max_args = 64;
  limits.max_inline_bytes = 1024;
  RequestParser parser(limits);
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!rest.empty()) {
    std::size_t consumed = 0;
    if (parser.parse(rest, &consumed) != ParseStatus::kComplete) break;
    rest.remove_prefix(consumed);
    if (!parser.args().empty()) node.run(parser.args());
  }
  if (wal) node.check_restart();
  return 0;
}
