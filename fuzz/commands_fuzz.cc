// Fuzzes the RESP commands of one node end to end, without sockets: parsed requests go through
// each connection's Pipeline (the command table and the call runner) to the policy (rules,
// rate limits) over an embedded backend (lock table, waiters) over a MemoryStore, with a fake
// clock, for three connections. Any input must leave the server answering: no crash, no
// undefined behaviour, and exactly one reply per command, in order: whenever a connection has
// no call in flight, it has had as many replies as it ran commands. And fencing must hold:
// the tokens that lock replies show for a key never go down.
//
// With the write-ahead log (bit 2 of the first byte) the store is a WalStore on an in-memory
// file system, snapshotting every 4 KiB of log; at the end of the input the connections close,
// the store closes, and a new one recovers from the files: it must find exactly the holds, the
// token high-water mark, the rule set and the typed values that the running server had.
//
// The first input byte picks the setup: bit 0 auth mode (credentials below; connections must
// AUTH), bit 1 a rate limit of 20 acquire attempts per user per hour, bit 2 the log, bit 3 the
// deferred shape (every call takes effect later, when FUZZ.RUN says, as on a node over
// PostgreSQL: deferred_service.h; scripts are then refused). The rest is a RESP stream, EVAL
// and SCRIPT included. Pseudo-commands steer the
// harness: FUZZ.CONN n (later commands come from connection n % 3), FUZZ.TICK ms (the clock
// moves on, lease ends and timeouts run), FUZZ.CLOSE (the current connection goes away and a
// new one takes its place), FUZZ.RUN n (the deferred call at n runs). Handles are
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
#include "core/lock_table.h"
#include "core/validation.h"
#include "core/values/value_store.h"
#include "core/values/value_text.h"
#include "deferred_service.h"
#include "resp_replies.h"
#include "script/engine.h"
#include "server/resp/pipeline.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
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

// One connection: its pipeline, and what it has been told.
struct FuzzConnection final : Pipeline::Events {
  void replies_ready() override {}  // the harness reads every output after every step
  void resume() override {}
  void keep_alive(bool) override {}

  std::unique_ptr<Pipeline> pipeline;
  std::string replies;         // every reply, in order, since the connection opened
  std::uint64_t commands = 0;  // commands it ran
};

class Node {
 public:
  Node(bool auth, bool rate_limited, bool wal, bool deferred)
      : store_(wal ? std::unique_ptr<Store>(
                         std::make_unique<wal::WalStore>(wal_options(), clock_, fs_))
                   : std::make_unique<MemoryStore>()),
        backend_(clock_, *store_),
        policy_(backend_, clock_, options(rate_limited)),
        deferred_service_(policy_),
        service_(deferred ? static_cast<LockService&>(deferred_service_) : policy_),
        info_{"fuzz", auth},
        env_{service_, info_, auth ? &credentials() : nullptr, nullptr, &scripts_} {
    if (!backend_.recover().ok()) std::abort();
    for (auto& c : connections_) open(c);
  }

  ~Node() {
    if (!store_closed_) close_all();
  }

  // What a restart would recover must be what the server has now (log mode only).
  void check_restart() {
    close_all();
    const Millis now = clock_.now_ms();
    const DurableState live = backend_.table().snapshot(now);
    const auto live_values = values_of(backend_.values());
    struct Keep final : Completion {
      void finish(Result<Answer> r) override { result.emplace(std::move(r)); }
      std::optional<Result<Answer>> result;
    } rules_answer;
    backend_.get_rule_set(rules_answer);  // durable at once: the log here never syncs
    if (!rules_answer.result || !rules_answer.result->ok()) std::abort();
    const auto& live_rules = std::get<std::optional<RuleSetPut>>(**rules_answer.result);
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
    ValueStore values;
    values.restore(std::move(recovered->values), now);
    again.close();
    if (values_of(values) != live_values) std::abort();
    if (restored.last_token != live.last_token) std::abort();
    if (sorted(restored.holds) != sorted(live.holds)) std::abort();
    const auto& rules = live_rules;
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
    } else if (iequals(name, "FUZZ.RUN")) {
      const std::int64_t n = args.size() > 1 ? parse_int64(args[1]).value_or(0) : 0;
      deferred_service_.run(static_cast<std::size_t>(n < 0 ? 0 : n));
    } else if (c.pipeline->drain(), c.pipeline->ready()) {  // blocked: reads nothing until answered
      ++c.commands;
      if (c.pipeline->run(args) == Flow::kClose) {
        collect(c);
        check_replies(c);
        reopen(c);
      }
    }
    service_.dispatch();  // what the loop does after each event
    for (auto& each : connections_) {
      collect(each);
      check_replies(each);
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

  // Every typed value that has not expired, as text: key -> "type@expiry:elements".
  std::map<std::string, std::string> values_of(const ValueStore& store) const {
    const Millis now = clock_.now_ms();
    std::map<std::string, std::string> out;
    store.for_each([&](std::string_view key, const Value& v, Millis expires_at) {
      if (expires_at > now)
        out[std::string(key)] = std::to_string(expires_at) + ":" + canonical_text(v);
    });
    return out;
  }

  static std::vector<HoldState> sorted(std::vector<HoldState> holds) {
    std::sort(holds.begin(), holds.end(),
              [](const HoldState& a, const HoldState& b) { return a.key < b.key; });
    return holds;
  }

  static PolicyOptions options(bool rate_limited) {
    PolicyOptions o;
    if (rate_limited) o.acquire_per_user_per_hour = 20;
    return o;
  }

  // Takes what the connection's pipeline has written: checks tokens, remembers a handle.
  void collect(FuzzConnection& c) {
    std::string& out = c.pipeline->output();
    if (out.empty()) return;
    check_tokens(out);
    if (echo_)
      std::fprintf(stderr, "[%zu] %s\n", static_cast<std::size_t>(&c - connections_.data()),
                   out.c_str());
    remember_handle(out);
    c.replies += out;
    out.clear();
  }

  // Exactly one well-formed reply per command: with no call in flight, all have come.
  static void check_replies(const FuzzConnection& c) {
    bool bad = false;
    const std::size_t replies = fuzz::count_replies(c.replies, &bad);
    if (bad || replies > c.commands) std::abort();
    if (!c.pipeline->in_flight() && replies != c.commands) std::abort();
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
    c.pipeline = std::make_unique<Pipeline>(env_, ++last_session_, c);
    c.replies.clear();
    c.commands = 0;
  }

  void close_all() {
    for (auto& c : connections_) c.pipeline->end();
    if (!deferred_service_.empty()) std::abort();  // every session has ended
    service_.dispatch();
  }

  // The connection goes away and a new one takes its place. Its calls still in flight finish
  // (their answers are dropped); the pipeline object must outlive them, so it is kept.
  void reopen(FuzzConnection& c) {
    c.pipeline->end();
    service_.dispatch();
    ended_.push_back(std::move(c.pipeline));
    open(c);
  }

  bool store_closed_ = false;
  const bool echo_ = std::getenv("HOLDFAST_FUZZ_ECHO") != nullptr;  // replies to stderr
  FakeClock clock_;
  wal::FakeFileSystem fs_;
  std::unique_ptr<Store> store_;
  EmbeddedBackend backend_;
  Policy policy_;
  fuzz::DeferredService deferred_service_;
  LockService& service_;
  const ServerInfo info_;
  // Scripts (EVAL) under small limits, timed by a clock that moves 1 ms a reading, so a
  // runaway script stops after the same work on every run.
  Millis script_clock_ = 0;
  script::Engine scripts_{script::Limits{20, std::size_t{8} << 20},
                          [this] { return ++script_clock_; }};
  const Pipeline::Env env_;
  std::array<FuzzConnection, 3> connections_;
  std::vector<std::unique_ptr<Pipeline>> ended_;
  std::size_t current_ = 0;
  SessionId last_session_ = 0;
  std::string last_handle_;
  std::map<std::string, std::int64_t> tokens_;  // the highest token seen per key
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool wal = (data[0] & 4) != 0;
  Node node((data[0] & 1) != 0, (data[0] & 2) != 0, wal, (data[0] & 8) != 0);
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
