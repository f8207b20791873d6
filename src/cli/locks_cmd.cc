// holdfast locks list|status|acquire|release|renew|assign|transfer|unassign|holder|check|run: the
// lock namespace from the command line, through the public client library.
//
// Each subcommand builds one holdfast::Client from --server/--token, makes one or two calls,
// prints the result (a table for people, --json for scripts; see locks_output.h) and maps the
// outcome to the exit codes of docs/reference.md section 8 (kExit* in commands.h):
//   0 done; 1 not acquired (held, timed out, rate limited) or not renewed/released/
//   transferred/unassigned; 2 usage error (bad flags, or arguments the server refused);
//   3 authentication or access error; 4 server unreachable or unavailable.
// `acquire --session` and `run` keep holding after the grant (locks_hold.h).
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/duration_flag.h"
#include "cli/locks_hold.h"
#include "cli/locks_output.h"
#include "cli/remote.h"
#include "holdfast/client.h"

namespace holdfast::cli {
namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 done; 1 not acquired (held or timed out) or not renewed/released;\n"
    "2 usage error; 3 authentication or access error; 4 server unreachable.\n"
    "--json prints the wire's field names; times are milliseconds since the Unix epoch;\n"
    "errors become {\"errorCode\", \"message\", \"details\"} on stdout.\n"
    "Durations (--ttl, --wait, --lock-delay): 1500ms, 30s, 5m or 2h; a plain number is\n"
    "milliseconds.";

struct Flags {
  RemoteOptions remote;  // common to every subcommand: --server, --token, --json
  // Per subcommand.
  std::string key, handle, owner, holder_id, to_id, from_id, match, cursor;
  std::int64_t ttl_ms = 60000;
  std::int64_t wait_ms = -1;
  std::size_t count = 0;
  bool session = false;
  bool shared = false;                   // --shared
  std::int64_t permits = 0;              // --permits N: a semaphore of N permits; 0: not given
  std::int64_t take = 0;                 // --take K: permits this hold takes; 0: not given (1)
  std::vector<std::string> more_keys;    // --key K: more keys, in the mode of KEY
  std::vector<std::string> shared_keys;  // --shared-key K: more keys, held shared
  std::int64_t lock_delay_ms = -1;       // --lock-delay MS; -1: not given
  std::vector<std::string> command;      // run: CMD and its arguments
  int conflict_exit_code = kExitNotAcquired;
};

// The mode the flags ask for. CLI11 has already refused --shared with --permits, and --take
// without --permits; the server checks the numbers against each other and the key.
AcquireMode acquire_mode(const Flags& f) {
  if (f.permits > 0)
    return AcquireMode::semaphore(static_cast<std::uint32_t>(f.permits),
                                  f.take > 0 ? static_cast<std::uint32_t>(f.take) : 1);
  return f.shared ? AcquireMode::shared() : AcquireMode::exclusive();
}

// KEY and every --key in the mode the flags ask for, then every --shared-key shared. More
// than one key makes a multi-key request (docs/lock-kinds.md, "Several keys at once").
std::vector<KeyRequest> key_requests(const Flags& f) {
  std::vector<KeyRequest> keys = {{f.key, acquire_mode(f)}};
  for (const std::string& k : f.more_keys) keys.push_back({k, acquire_mode(f)});
  for (const std::string& k : f.shared_keys) keys.push_back({k, AcquireMode::shared()});
  return keys;
}

// --lock-delay MS, if given. CLI11 has refused it beside --key and --shared-key (a group has no
// lock-delay); the server checks its range.
std::optional<std::chrono::milliseconds> lock_delay(const Flags& f) {
  if (f.lock_delay_ms < 0) return std::nullopt;
  return std::chrono::milliseconds(f.lock_delay_ms);
}

HoldOptions hold_options(const Flags& f) {
  HoldOptions o;
  o.remote = f.remote;
  o.keys = key_requests(f);
  o.ttl_ms = f.ttl_ms;
  o.wait_ms = f.wait_ms;
  if (!f.owner.empty()) o.owner = f.owner;
  o.session = f.session;
  o.lock_delay = lock_delay(f);
  return o;
}

constexpr const char* kRunExitCodes =
    "Durations (--ttl, --wait, --lock-delay): 1500ms, 30s, 5m or 2h; a plain number is\n"
    "milliseconds.\n"
    "Exit codes: CMD's status once it ran (128 + N if it died of signal N); without running\n"
    "CMD: 1 not acquired (or --conflict-exit-code), 2 usage error, 3 authentication or access\n"
    "error, 4 server unreachable, 126 CMD cannot run, 127 CMD not found; 128 + N when signal N\n"
    "stopped holdfast while it waited for the key. CMD's environment has HOLDFAST_LOCK_KEY,\n"
    "HOLDFAST_LOCK_HANDLE and HOLDFAST_LOCK_TOKEN (the fencing token). A signal sent to\n"
    "holdfast is passed on to CMD; if the lease is lost CMD gets SIGTERM.";

TimePoint now() { return current_time(); }

// A whole number from `min` up, of `unit`. CLI11's own range checks call a word like "soon"
// or "1.5" out of range, and print a double's range for a count.
CLI::Validator whole_number(std::int64_t min, const std::string& unit) {
  return CLI::Validator(
      [min, unit](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (ec == std::errc::result_out_of_range) return text + " is too large";
        if (ec != std::errc() || p != end) return "'" + text + "' is not a whole number of " + unit;
        if (v < min) return text + " is below " + std::to_string(min);
        return "";
      },
      unit + " >= " + std::to_string(min));
}

// Connects lazily, runs `body`, maps exceptions to an exit code and a message.
int run(const Flags& f, const std::function<int(Client&)>& body) {
  return run_remote(f.remote, "holdfast locks", body);
}

int list(const Flags& f, Client& client) {
  std::vector<HoldInfo> holds;
  std::string next = "0";
  if (f.count > 0 || !f.cursor.empty()) {
    ListPage page =
        client.list({f.match, f.cursor.empty() ? "0" : f.cursor, f.count > 0 ? f.count : 100});
    holds = std::move(page.holds);
    next = page.next_cursor;
  } else {
    holds = client.list_all(f.match);
  }
  if (f.remote.json) {
    std::cout << json_list(holds, next) << "\n";
  } else {
    print_list(std::cout, holds, now());
    if (next != "0") std::cout << "more: holdfast locks list --cursor " << next << "\n";
  }
  return kExitOk;
}

int status(const Flags& f, Client& client) {
  LockStatus s = client.status(f.key);
  if (f.remote.json) {
    std::cout << json_status(s) << "\n";
  } else {
    print_status(std::cout, s, now());
  }
  return kExitOk;
}

// One attempt (`attempt`: nullopt when not granted) or, with --wait MS, a wait (`wait`: throws
// LockTimeoutError when it ends without a grant). A wait the first attempt cannot spare is
// announced once on stderr, with who has the keys, before it blocks; --wait 0 is the wait's one
// attempt, which ends in LOCK_TIMEOUT as on the wire. (The attempt counts against a member's
// rate limit like the wait does; over the limit the wait still waits for a slot.)
template <typename Hold, typename Attempt, typename Wait>
std::optional<Hold> take(const Flags& f, Client& client, Attempt attempt, Wait wait) {
  if (f.wait_ms < 0) return attempt();
  if (f.wait_ms == 0) return wait();
  try {
    if (std::optional<Hold> hold = attempt()) return hold;
    say_waiting("holdfast locks", client, key_requests(f), f.wait_ms);
  } catch (const RateLimitedError& e) {
    say_waiting("holdfast locks", client, key_requests(f), f.wait_ms, &e);
  }
  return wait();
}

// Not acquired: nil (or the LOCK_TIMEOUT error) for scripts, who has the keys for people.
int not_acquired(const Flags& f, Client& client, const LockTimeoutError* timed_out) {
  if (f.remote.json) {
    std::cout << (timed_out != nullptr ? json_error(*timed_out) : "null") << "\n";
  } else {
    std::cout << "not acquired: "
              << (timed_out != nullptr ? "no grant within " + duration_text(f.wait_ms) + "; " : "")
              << cli::who_holds(client, key_requests(f), now()) << "\n";
  }
  return kExitNotAcquired;
}

// acquire KEY --key K2 ...: every key at once or none.
int acquire_group(const Flags& f, Client& client) {
  std::optional<std::string> owner;
  if (!f.owner.empty()) owner = f.owner;
  const std::vector<KeyRequest> keys = key_requests(f);
  const auto ttl = std::chrono::milliseconds(f.ttl_ms);
  std::optional<LockGroup> group;
  try {
    group = take<LockGroup>(
        f, client, [&] { return client.try_acquire_all(keys, {.ttl = ttl, .owner = owner}); },
        [&] {
          return client.acquire_all(
              keys, {.ttl = ttl, .timeout = std::chrono::milliseconds(f.wait_ms), .owner = owner});
        });
  } catch (const LockTimeoutError& e) {
    return not_acquired(f, client, &e);
  }
  if (!group) return not_acquired(f, client, nullptr);
  if (f.remote.json) {
    std::cout << json_group(*group) << "\n";
  } else {
    print_group(std::cout, *group, now());
    // The server releases the whole group through any one of its keys.
    std::cout << "release with: holdfast locks release " << group->holds.front().key << " --handle "
              << group->handle << "\n";
  }
  return kExitOk;
}

int acquire(const Flags& f, Client& client) {
  if (!f.more_keys.empty() || !f.shared_keys.empty()) return acquire_group(f, client);
  std::optional<std::string> owner;
  if (!f.owner.empty()) owner = f.owner;
  const auto ttl = std::chrono::milliseconds(f.ttl_ms);
  std::optional<LockHandle> hold;
  try {
    hold = take<LockHandle>(
        f, client,
        [&] {
          return client.try_acquire(
              f.key,
              {.ttl = ttl, .owner = owner, .mode = acquire_mode(f), .lock_delay = lock_delay(f)});
        },
        [&] {
          return client.acquire(f.key, {.ttl = ttl,
                                        .timeout = std::chrono::milliseconds(f.wait_ms),
                                        .owner = owner,
                                        .mode = acquire_mode(f),
                                        .lock_delay = lock_delay(f)});
        });
  } catch (const LockTimeoutError& e) {
    return not_acquired(f, client, &e);
  }
  if (!hold) return not_acquired(f, client, nullptr);
  if (f.remote.json) {
    std::cout << json_hold(*hold) << "\n";
  } else {
    print_hold(std::cout, *hold, now());
    std::cout << "release with: holdfast locks release " << hold->key << " --handle "
              << hold->handle << "\n";
  }
  return kExitOk;
}

int release(const Flags& f, Client& client) {
  ReleaseResult r = client.release(f.key, f.handle);
  if (f.remote.json) {
    std::cout << json_release(r) << "\n";
  } else if (r.released) {
    std::cout << "released " << f.key << "\n";
  } else {
    std::cout << "not released: " << r.reason << " (the handle is not the current hold of " << f.key
              << ")\n";
  }
  return r.released ? kExitOk : kExitNotAcquired;
}

int renew(const Flags& f, Client& client) {
  RenewResult r = client.renew(f.key, f.handle, std::chrono::milliseconds(f.ttl_ms));
  if (f.remote.json) {
    std::cout << json_renew(r) << "\n";
  } else if (r.renewed) {
    std::cout << "renewed " << f.key << ", expires "
              << (r.lease_expires_at ? relative_time(*r.lease_expires_at, now()) + " (" +
                                           iso_time(*r.lease_expires_at) + ")"
                                     : std::string("-"))
              << "\n";
  } else {
    std::cout << "not renewed: " << r.reason << " (the lease ended or the key was taken over)\n";
  }
  return r.renewed ? kExitOk : kExitNotAcquired;
}

int assign(const Flags& f, Client& client, bool ttl_given) {
  AssignOptions o;
  if (ttl_given) o.ttl = std::chrono::milliseconds(f.ttl_ms);
  o.lock_delay = lock_delay(f);
  // No holder given: the server takes the caller's own (with credentials).
  auto attempt = [&] {
    return f.holder_id.empty() ? client.assign(f.key, o) : client.assign(f.key, f.holder_id, o);
  };
  // With --wait, as take() above: one attempt first, and a wait it cannot spare said once.
  std::optional<Assignment> a;
  if (f.wait_ms > 0) {
    try {
      a = attempt();
    } catch (const LockHeldError&) {
      say_waiting("holdfast locks", client, key_requests(f), f.wait_ms);
    } catch (const RateLimitedError& e) {
      say_waiting("holdfast locks", client, key_requests(f), f.wait_ms, &e);
    }
  }
  if (!a) {
    if (f.wait_ms >= 0) o.timeout = std::chrono::milliseconds(f.wait_ms);
    a = attempt();
  }
  if (f.remote.json) {
    std::cout << json_assignment(*a) << "\n";
  } else {
    print_assignment(std::cout, *a, now());
  }
  return kExitOk;
}

int transfer(const Flags& f, Client& client) {
  std::optional<std::string_view> from;
  if (!f.from_id.empty()) from = f.from_id;
  TransferResult t = client.transfer(f.key, f.to_id, from);
  if (f.remote.json) {
    std::cout << json_transfer(t) << "\n";
  } else {
    std::cout << "transferred " << f.key << (from ? " from " + f.from_id : std::string()) << " to "
              << t.holder << " (token " << t.token << ")\n";
  }
  return kExitOk;
}

int unassign(const Flags& f, Client& client) {
  std::optional<std::string_view> holder;
  if (!f.holder_id.empty()) holder = f.holder_id;
  bool released = client.unassign(f.key, holder);
  if (f.remote.json) {
    std::cout << json_unassign(released) << "\n";
  } else {
    std::cout << (released ? "unassigned " + f.key
                           : "not unassigned: " + f.key + " was not assigned")
              << "\n";
  }
  return released ? kExitOk : kExitNotAcquired;
}

// The server's holder check: exit 0 with the hold when the holder (none given: the caller)
// holds KEY; NotHolderError (exit 1) otherwise.
int check(const Flags& f, Client& client) {
  std::optional<std::string_view> holder;
  if (!f.holder_id.empty()) holder = f.holder_id;
  HolderInfo h = client.verify_holder(f.key, holder);
  if (f.remote.json) {
    std::cout << json_holder(h) << "\n";
  } else {
    print_holder(std::cout, h, now());
  }
  return kExitOk;
}

int holder(const Flags& f, Client& client) {
  HolderInfo h = client.holder(f.key);
  if (f.remote.json) {
    std::cout << json_holder(h) << "\n";
  } else {
    print_holder(std::cout, h, now());
  }
  return kExitOk;
}

constexpr const char* kCommonOptions =
    "Also takes --server URL, --token T (or HOLDFAST_TOKEN), --tls-ca/--tls-cert/--tls-key "
    "(rediss://) and --json.\n";

// --shared, --permits N and --take K of acquire and run (docs/lock-kinds.md).
void add_mode_flags(CLI::App* cmd, Flags& f) {
  CLI::Option* shared = cmd->add_flag(
      "--shared", f.shared, "a shared hold: beside other shared holds, never an exclusive one");
  CLI::Option* permits =
      cmd->add_option("--permits", f.permits,
                      "a hold on a semaphore of N permits (N as the key has, if it has holds)")
          ->check(whole_number(1, "permits"));
  cmd->add_option("--take", f.take, "with --permits: permits this hold takes (default 1)")
      ->check(whole_number(1, "permits"))
      ->needs(permits);
  shared->excludes(permits);
}

// A duration option (cli/duration_flag.h) from `min_ms` up, bound to milliseconds.
CLI::Option* add_duration(CLI::App* cmd, const std::string& name, std::int64_t& ms,
                          std::int64_t min_ms, const std::string& about) {
  return cmd->add_option(name, ms, about)->transform(duration_flag(min_ms))->type_name("DURATION");
}

// --ttl of acquire, renew, assign and run.
CLI::Option* add_ttl_flag(CLI::App* cmd, Flags& f, const std::string& about) {
  return add_duration(cmd, "--ttl", f.ttl_ms, 1, about);
}

// --wait of acquire, run and assign, which say who has the key before they wait.
CLI::Option* add_wait_flag(CLI::App* cmd, Flags& f) {
  return add_duration(cmd, "--wait", f.wait_ms, 0,
                      "wait in the queue up to this long, saying first (on stderr) who has the "
                      "key; 0: one attempt that ends in LOCK_TIMEOUT (default: one attempt)");
}

// --lock-delay of acquire, run and assign.
CLI::Option* add_lock_delay_flag(CLI::App* cmd, Flags& f) {
  return add_duration(cmd, "--lock-delay", f.lock_delay_ms, 0,
                      "keep the key closed this long (up to 1m) after the hold ends without a "
                      "release: its lease ran out or its session ended (default: the rule "
                      "set's, else none)");
}

// --key K and --shared-key K of acquire and run: more keys, taken with KEY all at once or not
// at once. A group has no lock-delay.
void add_key_flags(CLI::App* cmd, Flags& f, CLI::Option* lock_delay) {
  CLI::Option* more =
      cmd->add_option("--key", f.more_keys,
                      "another key to take with KEY, all or none, in KEY's mode (repeatable)");
  CLI::Option* shared =
      cmd->add_option("--shared-key", f.shared_keys,
                      "another key to take with KEY, all or none, held shared (repeatable)");
  // One key per --key: `--key b c` is a mistake, not two keys.
  more->allow_extra_args(false);
  shared->allow_extra_args(false);
  lock_delay->excludes(more)->excludes(shared);
}

CLI::App* leaf(CLI::App* locks, const std::string& name, const std::string& about,
               const std::string& footer = std::string(kCommonOptions) + kExitCodes) {
  CLI::App* cmd = locks->add_subcommand(name, about);
  // Options of `locks` (--server, --token, --json) may also come after the subcommand.
  cmd->fallthrough();
  cmd->footer(footer);
  return cmd;
}

}  // namespace

void add_locks_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<Flags>();
  CLI::App* locks =
      app.add_subcommand("locks", "Inspect, take and free locks on a Holdfast server");
  locks->require_subcommand(1);
  locks->footer(kExitCodes);
  add_remote_options(locks, f->remote);
  add_locks_watch_command(*locks, f->remote, exit_code);

  auto on = [f, &exit_code](CLI::App* cmd, std::function<int(const Flags&, Client&)> body) {
    cmd->callback(
        [f, &exit_code, body] { exit_code = run(*f, [&](Client& c) { return body(*f, c); }); });
  };

  CLI::App* list_cmd =
      leaf(locks, "list", "List held locks (admin); every page unless --count/--cursor");
  list_cmd->add_option("--match", f->match,
                       "only keys matching this glob, e.g. 'import:*' (default: every key)");
  list_cmd->add_option("--count", f->count, "one page of at most this many (default: every page)")
      ->check(whole_number(1, "holds"));
  list_cmd->add_option("--cursor", f->cursor,
                       "continue from this cursor, from a previous page (default: the start)");
  on(list_cmd, list);

  CLI::App* status_cmd = leaf(locks, "status", "Who holds KEY, until when, and how many wait");
  status_cmd->add_option("key", f->key, "the lock key")->required();
  on(status_cmd, status);

  CLI::App* acquire_cmd =
      leaf(locks, "acquire",
           "Take KEY: one attempt, or wait up to --wait; prints the hold and its handle");
  acquire_cmd->add_option("key", f->key, "the lock key")->required();
  add_ttl_flag(acquire_cmd, *f, "the lease (default 1m)");
  acquire_cmd->add_option("--owner", f->owner,
                          "name this run, so it can re-take its own hold (default none)");
  add_wait_flag(acquire_cmd, *f);
  acquire_cmd->add_flag("--session", f->session,
                        "a session hold: keep holding (and renewing) until Ctrl-C, SIGTERM or "
                        "SIGHUP, then release; the hold also ends if this command dies "
                        "(default: a lease hold that outlives the command)");
  add_mode_flags(acquire_cmd, *f);
  add_key_flags(acquire_cmd, *f, add_lock_delay_flag(acquire_cmd, *f));
  acquire_cmd->callback([f, &exit_code] {
    exit_code = f->session ? hold_until_stopped(hold_options(*f))
                           : run(*f, [&](Client& c) { return acquire(*f, c); });
  });

  CLI::App* release_cmd = leaf(locks, "release", "Free KEY with the handle that acquire printed");
  release_cmd->add_option("key", f->key, "the lock key")->required();
  release_cmd->add_option("--handle", f->handle, "the handle of the hold")->required();
  on(release_cmd, release);

  CLI::App* renew_cmd = leaf(locks, "renew", "Extend the lease of KEY to now + --ttl");
  renew_cmd->add_option("key", f->key, "the lock key")->required();
  renew_cmd->add_option("--handle", f->handle, "the handle of the hold")->required();
  add_ttl_flag(renew_cmd, *f, "the new lease, from now")->required();
  on(renew_cmd, renew);

  CLI::App* assign_cmd =
      leaf(locks, "assign", "Hold KEY on behalf of HOLDER (an identity-aware hold)");
  assign_cmd->add_option("key", f->key, "the lock key")->required();
  assign_cmd->add_option("holder", f->holder_id,
                         "the holder id, e.g. a user id (default with credentials: your own)");
  CLI::Option* assign_ttl = add_ttl_flag(assign_cmd, *f, "the lease (default: never expires)");
  add_wait_flag(assign_cmd, *f);
  add_lock_delay_flag(assign_cmd, *f);
  assign_cmd->callback([f, &exit_code, assign_ttl] {
    exit_code = run(*f, [&](Client& c) { return assign(*f, c, assign_ttl->count() > 0); });
  });

  CLI::App* transfer_cmd =
      leaf(locks, "transfer", "Move the assigned hold of KEY from --from to TO");
  transfer_cmd->add_option("key", f->key, "the lock key")->required();
  transfer_cmd->add_option("to", f->to_id, "the new holder id")->required();
  transfer_cmd->add_option("--from", f->from_id,
                           "the current holder id (default with credentials: your own)");
  on(transfer_cmd, transfer);

  CLI::App* unassign_cmd = leaf(locks, "unassign", "Free the assigned hold of KEY");
  unassign_cmd->add_option("key", f->key, "the lock key")->required();
  unassign_cmd->add_option("--holder", f->holder_id,
                           "only if this holder id holds it (default: your own with "
                           "credentials, whoever holds it without)");
  on(unassign_cmd, unassign);

  CLI::App* holder_cmd = leaf(locks, "holder", "The holder id of an assigned KEY");
  holder_cmd->add_option("key", f->key, "the lock key")->required();
  on(holder_cmd, holder);

  CLI::App* check_cmd =
      leaf(locks, "check", "Whether HOLDER holds KEY, with its token (exit 1 if not)");
  check_cmd->add_option("key", f->key, "the lock key")->required();
  check_cmd->add_option("holder", f->holder_id,
                        "the holder id (default with credentials: your own)");
  on(check_cmd, check);

  CLI::App* run_cmd = leaf(
      locks, "run",
      "Run CMD while holding KEY: renew while it runs, release when it exits, exit with "
      "its status (holdfast locks run KEY [options] -- CMD [ARGS...])",
      std::string("Also takes --server URL and --token T (or HOLDFAST_TOKEN).\n") + kRunExitCodes);
  run_cmd->add_option("key", f->key, "the lock key")->required();
  run_cmd->add_option("command", f->command, "the command and its arguments, after --")->required();
  add_ttl_flag(run_cmd, *f, "the lease, renewed every third of it (default 1m)");
  add_wait_flag(run_cmd, *f);
  run_cmd->add_option("--owner", f->owner,
                      "name this run, so it can re-take its own hold (default none)");
  run_cmd->add_flag("--session", f->session,
                    "a session hold: it also ends at once if holdfast dies (default: a lease "
                    "hold, which then ends when its lease runs out)");
  run_cmd
      ->add_option("--conflict-exit-code", f->conflict_exit_code,
                   "exit code when KEY is not acquired, to tell it from CMD's (default 1)")
      ->check(CLI::Range(0, 255));
  add_mode_flags(run_cmd, *f);
  add_key_flags(run_cmd, *f, add_lock_delay_flag(run_cmd, *f));
  run_cmd->callback([f, &exit_code] {
    exit_code = run_while_holding(hold_options(*f), f->command, f->conflict_exit_code);
  });
}

}  // namespace holdfast::cli
