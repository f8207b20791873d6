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
#include "cli/locks_output.h"
#include "cli/signal_watch.h"
#include "holdfast/client.h"

extern char** environ;

namespace holdfast::cli {
namespace {

constexpr const char* kLostHint =
    "a renewal found it taken, or the lease ran out before a renewal got through";

// Step 2 of locks_hold.h: the acquire runs on a thread of its own while this thread waits for
// it or for a stop signal. Throws what LockScope throws.
std::unique_ptr<LockScope> acquire(SignalWatch& signals, Client& client, const HoldOptions& o,
                                   std::string_view who) {
  WithLockOptions w;
  w.ttl = std::chrono::milliseconds(o.ttl_ms);
  w.timeout = std::chrono::milliseconds(o.wait_ms < 0 ? 0 : o.wait_ms);
  w.owner = o.owner;
  w.session = o.session;
  w.mode = o.mode;
  w.on_lost = [&signals](const LockHandle&) { signals.wake(); };
  std::unique_ptr<LockScope> scope;
  std::exception_ptr failure;
  std::thread acquirer([&] {
    try {
      scope = std::make_unique<LockScope>(client, o.key, w);
    } catch (...) {
      failure = std::current_exception();
    }
    signals.wake();
  });
  for (;;) {
    const SignalWatch::Event e = signals.wait();
    if (e.kind == SignalWatch::Event::kWake) break;
    if (SignalWatch::is_stop_signal(e.signal)) {
      std::cerr << who << ": interrupted while waiting for " << o.key << "\n";
      // The acquire cannot be called off; the connection it waits on closes with the process.
      std::_Exit(128 + e.signal);
    }
  }
  acquirer.join();
  if (failure) std::rethrow_exception(failure);
  return scope;
}

// "no grant within 2000 ms; jobs:1 is held by user:local, expires in 42 s"
std::string not_acquired_reason(Client& client, const HoldOptions& o) {
  std::string reason;
  if (o.wait_ms >= 0) reason = "no grant within " + std::to_string(o.wait_ms) + " ms; ";
  return reason + who_holds(client, o.key, current_time());
}

// CMD's environment: ours, with the hold's key, handle and fencing token.
std::vector<std::string> child_environment(const LockHandle& hold) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "HOLDFAST_LOCK_", 14) != 0) env.emplace_back(*e);
  }
  env.push_back("HOLDFAST_LOCK_KEY=" + hold.key);
  env.push_back("HOLDFAST_LOCK_HANDLE=" + hold.handle);
  env.push_back("HOLDFAST_LOCK_TOKEN=" + std::to_string(hold.token));
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
int wait_for_child(pid_t pid, SignalWatch& signals, LockScope& scope, const std::string& name) {
  bool lost_reported = false;
  for (;;) {
    const SignalWatch::Event e = signals.wait();
    if (e.kind == SignalWatch::Event::kWake) {
      if (!lost_reported && scope.context().lost()) {
        lost_reported = true;
        std::cerr << "holdfast locks run: lost the hold on " << scope.context().key() << " ("
                  << kLostHint << "); sending " << name << " SIGTERM\n";
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
void release_quietly(LockScope& scope, std::string_view who) {
  try {
    ReleaseResult r = scope.release();
    if (!r.released && !scope.context().lost()) {
      std::cerr << who << ": not released: " << r.reason << "\n";
    }
  } catch (const Error& e) {
    std::cerr << who << ": could not release " << scope.context().key() << " (" << e.what()
              << "); it ends with its lease\n";
  }
}

}  // namespace

int hold_until_stopped(const HoldOptions& o) {
  return run_remote(o.remote, "holdfast locks", [&](Client& client) -> int {
    SignalWatch signals;  // before the first thread: the Client has started none yet
    std::unique_ptr<LockScope> scope;
    try {
      scope = acquire(signals, client, o, "holdfast locks");
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
    const LockHandle hold = scope->context().lock_handle();
    if (o.remote.json) {
      std::cout << json_hold(hold) << std::endl;
    } else {
      print_hold(std::cout, hold, current_time());
      std::cout << "holding " << hold.key
                << " and renewing it until Ctrl-C, SIGTERM or SIGHUP; then released" << std::endl;
    }
    for (;;) {
      const SignalWatch::Event e = signals.wait();
      if (e.kind == SignalWatch::Event::kWake) {
        if (!scope->context().lost()) continue;
        std::cerr << "holdfast locks: lost the hold on " << hold.key << " (" << kLostHint << ")\n";
        return kExitNotAcquired;
      }
      if (SignalWatch::is_stop_signal(e.signal)) break;
    }
    const ReleaseResult r = scope->release();
    if (o.remote.json) {
      std::cout << json_release(r) << "\n";
    } else if (r.released) {
      std::cout << "released " << hold.key << "\n";
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
    std::unique_ptr<LockScope> scope;
    try {
      scope = acquire(signals, client, o, kWho);
    } catch (const LockTimeoutError&) {
      std::cerr << kWho << ": not acquired: " << not_acquired_reason(client, o) << "; "
                << command[0] << " did not run\n";
      return conflict_exit_code;
    } catch (const RateLimitedError& e) {
      std::cerr << kWho << ": not acquired: " << e.what() << "; " << command[0] << " did not run\n";
      return conflict_exit_code;
    }
    pid_t pid = -1;
    if (const int err = spawn(command, child_environment(scope->context().lock_handle()),
                              signals.original_mask(), &pid);
        err != 0) {
      std::cerr << kWho << ": cannot run " << command[0] << ": " << std::strerror(err) << "\n";
      release_quietly(*scope, kWho);
      return err == ENOENT ? 127 : 126;  // as shells report a command not found / not runnable
    }
    const int status = wait_for_child(pid, signals, *scope, command[0]);
    release_quietly(*scope, kWho);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  });
}

}  // namespace holdfast::cli
