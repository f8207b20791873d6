#include "cli/locks_hold.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/duration_flag.h"
#include "cli/locks_output.h"
#include "cli/signal_watch.h"
#include "holdfast/client.h"

extern char** environ;

namespace holdfast::cli {
namespace {

constexpr const char* kLostHint =
    "a renewal found it taken, or the lease ran out before a renewal got through";

// What the commands hold: one key (a LockScope) or several (a LockGroupScope).
class Held {
 public:
  explicit Held(std::unique_ptr<LockScope> scope) : one_(std::move(scope)) {}
  explicit Held(std::unique_ptr<LockGroupScope> scope) : group_(std::move(scope)) {}

  bool lost() const { return one_ ? one_->context().lost() : group_->context().lost(); }
  ReleaseResult release() { return one_ ? one_->release() : group_->release(); }
  // The holds, in key order; as of the grant or the last renewal.
  std::vector<LockHandle> holds() const {
    if (one_) return {one_->context().lock_handle()};
    return group_->context().group().holds;
  }
  LockGroup group() const { return group_->context().group(); }
  bool is_group() const { return group_ != nullptr; }
  // "jobs:1", or "a, b" for a group: for messages.
  std::string keys() const {
    std::string text;
    for (const LockHandle& h : holds()) text += (text.empty() ? "" : ", ") + h.key;
    return text;
  }

 private:
  std::unique_ptr<LockScope> one_;
  std::unique_ptr<LockGroupScope> group_;
};

// Step 2 of locks_hold.h: the acquire runs on a thread of its own while this thread waits for
// it or for a stop signal. Throws what LockScope or LockGroupScope throws.
// With --wait MS the thread first makes one attempt, and only if that fails says once on
// stderr who has the keys (locks_output.h, say_waiting) before it waits.
std::unique_ptr<Held> acquire(SignalWatch& signals, Client& client, const HoldOptions& o,
                              std::string_view who) {
  const auto ttl = std::chrono::milliseconds(o.ttl_ms);
  std::unique_ptr<Held> held;
  std::exception_ptr failure;
  auto take = [&](std::chrono::milliseconds timeout) {
    if (o.keys.size() == 1) {
      WithLockOptions w{.ttl = ttl,
                        .timeout = timeout,
                        .owner = o.owner,
                        .session = o.session,
                        .on_lost = [&signals](const LockHandle&) { signals.wake(); },
                        .mode = o.keys.front().mode,
                        .lock_delay = o.lock_delay};
      held = std::make_unique<Held>(std::make_unique<LockScope>(client, o.keys.front().key, w));
    } else {
      WithLocksOptions w{.ttl = ttl,
                         .timeout = timeout,
                         .owner = o.owner,
                         .session = o.session,
                         .on_lost = [&signals](const LockGroup&) { signals.wake(); }};
      held = std::make_unique<Held>(std::make_unique<LockGroupScope>(client, o.keys, w));
    }
  };
  std::thread acquirer([&] {
    try {
      if (o.wait_ms <= 0) {
        take(std::chrono::milliseconds(0));
      } else {
        try {
          take(std::chrono::milliseconds(0));
        } catch (const LockTimeoutError&) {
          say_waiting(who, client, o.keys, o.wait_ms);
        } catch (const RateLimitedError& e) {
          say_waiting(who, client, o.keys, o.wait_ms, &e);
        }
        if (!held) take(std::chrono::milliseconds(o.wait_ms));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    signals.wake();
  });
  for (;;) {
    const SignalWatch::Event e = signals.wait();
    if (e.kind == SignalWatch::Event::kWake) break;
    if (SignalWatch::is_stop_signal(e.signal)) {
      std::cerr << who << ": interrupted while waiting for " << o.keys.front().key
                << (o.keys.size() > 1 ? " and the other keys" : "") << "\n";
      // The acquire cannot be called off; the connection it waits on closes with the process.
      std::_Exit(128 + e.signal);
    }
  }
  acquirer.join();
  if (failure) std::rethrow_exception(failure);
  return held;
}

// "no grant within 2s; jobs:1 is held by user:local, expires in 42 s"
std::string not_acquired_reason(Client& client, const HoldOptions& o) {
  std::string reason;
  if (o.wait_ms >= 0) reason = "no grant within " + duration_text(o.wait_ms) + "; ";
  return reason + who_holds(client, o.keys, current_time());
}

// One line per item, for HOLDFAST_LOCK_KEYS and HOLDFAST_LOCK_TOKENS (a key has no newline).
template <typename Fn>
std::string lines(const std::vector<LockHandle>& holds, Fn&& item) {
  std::string text;
  for (const LockHandle& h : holds) text += (text.empty() ? "" : "\n") + item(h);
  return text;
}

// CMD's environment: ours, with the holds' keys, handle and fencing tokens.
std::vector<std::string> child_environment(const std::vector<LockHandle>& holds) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "HOLDFAST_LOCK_", 14) != 0) env.emplace_back(*e);
  }
  const LockHandle& first = holds.front();
  env.push_back("HOLDFAST_LOCK_KEY=" + first.key);
  env.push_back("HOLDFAST_LOCK_HANDLE=" + first.handle);
  env.push_back("HOLDFAST_LOCK_TOKEN=" + std::to_string(first.token));
  env.push_back("HOLDFAST_LOCK_KEYS=" + lines(holds, [](const LockHandle& h) { return h.key; }));
  env.push_back("HOLDFAST_LOCK_TOKENS=" +
                lines(holds, [](const LockHandle& h) { return std::to_string(h.token); }));
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts CMD with the signal mask holdfast was started with. Returns 0 or the errno of the
// failed exec (glibc's posix_spawnp reports it).
int spawn(std::vector<std::string> command, std::vector<std::string> env, const sigset_t& mask,
          pid_t* pid) {
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setsigmask(&attr, &mask);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv = c_strings(command);
  std::vector<char*> envp = c_strings(env);
  const int err = ::posix_spawnp(pid, argv[0], nullptr, &attr, argv.data(), envp.data());
  ::posix_spawnattr_destroy(&attr);
  return err;
}

// Step 3 of `run`: waits for CMD to exit, passing on signals, and stops it if the lease is lost.
// Returns CMD's wait status.
int wait_for_child(pid_t pid, SignalWatch& signals, Held& held, const std::string& name) {
  bool lost_reported = false;
  for (;;) {
    const SignalWatch::Event e = signals.wait();
    if (e.kind == SignalWatch::Event::kWake) {
      if (!lost_reported && held.lost()) {
        lost_reported = true;
        std::cerr << "holdfast locks run: lost the hold on " << held.keys() << " (" << kLostHint
                  << "); sending " << name << " SIGTERM\n";
        ::kill(pid, SIGTERM);
      }
      continue;
    }
    if (e.signal == SIGCHLD) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      continue;
    }
    // The terminal sent Ctrl-C (or Ctrl-\) to CMD as well: passing it on would make two.
    if (!e.from_terminal) ::kill(pid, e.signal);
  }
}

// Releases on the way out; a failure is reported, not thrown: CMD's status is what counts.
void release_quietly(Held& held, std::string_view who) {
  try {
    ReleaseResult r = held.release();
    if (!r.released && !held.lost()) {
      std::cerr << who << ": not released: " << r.reason << "\n";
    }
  } catch (const Error& e) {
    std::cerr << who << ": could not release " << held.keys() << " (" << e.what()
              << "); it ends with its lease\n";
  }
}

}  // namespace

int hold_until_stopped(const HoldOptions& o) {
  return run_remote(o.remote, "holdfast locks", [&](Client& client) -> int {
    SignalWatch signals;  // before the first thread: the Client has started none yet
    std::unique_ptr<Held> held;
    try {
      held = acquire(signals, client, o, "holdfast locks");
    } catch (const LockTimeoutError& e) {
      if (!o.remote.json) {
        std::cout << "not acquired: " << not_acquired_reason(client, o) << "\n";
      } else if (o.wait_ms >= 0) {
        std::cout << json_error(e) << "\n";
      } else {
        std::cout << "null\n";  // as a one-attempt acquire without --session prints
      }
      return kExitNotAcquired;
    }
    const std::string keys = held->keys();
    if (o.remote.json) {
      std::cout << (held->is_group() ? json_group(held->group()) : json_hold(held->holds().front()))
                << std::endl;
    } else {
      if (held->is_group()) {
        print_group(std::cout, held->group(), current_time());
      } else {
        print_hold(std::cout, held->holds().front(), current_time());
      }
      std::cout << "holding " << keys
                << " and renewing it until Ctrl-C, SIGTERM or SIGHUP; then released" << std::endl;
    }
    for (;;) {
      const SignalWatch::Event e = signals.wait();
      if (e.kind == SignalWatch::Event::kWake) {
        if (!held->lost()) continue;
        std::cerr << "holdfast locks: lost the hold on " << keys << " (" << kLostHint << ")\n";
        return kExitNotAcquired;
      }
      if (SignalWatch::is_stop_signal(e.signal)) break;
    }
    const ReleaseResult r = held->release();
    if (o.remote.json) {
      std::cout << json_release(r) << "\n";
    } else if (r.released) {
      std::cout << "released " << keys << "\n";
    } else {
      std::cout << "not released: " << r.reason << "\n";
    }
    return r.released ? kExitOk : kExitNotAcquired;
  });
}

int run_while_holding(const HoldOptions& o, const std::vector<std::string>& command,
                      int conflict_exit_code) {
  constexpr std::string_view kWho = "holdfast locks run";
  RemoteOptions remote = o.remote;
  remote.json = false;  // stdout is CMD's; holdfast's own messages go to stderr
  return run_remote(remote, kWho, [&](Client& client) -> int {
    SignalWatch signals;  // before the first thread: the Client has started none yet
    std::unique_ptr<Held> held;
    try {
      held = acquire(signals, client, o, kWho);
    } catch (const LockTimeoutError&) {
      std::cerr << kWho << ": not acquired: " << not_acquired_reason(client, o) << "; "
                << command[0] << " did not run\n";
      return conflict_exit_code;
    } catch (const RateLimitedError& e) {
      std::cerr << kWho << ": not acquired: " << e.what() << "; " << command[0] << " did not run\n";
      return conflict_exit_code;
    }
    pid_t pid = -1;
    if (const int err =
            spawn(command, child_environment(held->holds()), signals.original_mask(), &pid);
        err != 0) {
      std::cerr << kWho << ": cannot run " << command[0] << ": " << std::strerror(err) << "\n";
      release_quietly(*held, kWho);
      return err == ENOENT ? 127 : 126;  // as shells report a command not found / not runnable
    }
    const int status = wait_for_child(pid, signals, *held, command[0]);
    release_quietly(*held, kWho);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  });
}

}  // namespace holdfast::cli
