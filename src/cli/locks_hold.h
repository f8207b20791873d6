// The lock commands that keep holding after the grant: `holdfast locks acquire --session`,
// which holds until it is told to stop, and `holdfast locks run KEY -- CMD ARGS...`, which
// holds while CMD runs. Both renew the lease in the background and release on the way out.
//
// Lifecycle (both commands):
//   1. Block the stop signals (SignalWatch) before any thread starts.
//   2. Acquire on a thread of its own (a LockScope, or a LockGroupScope for several keys: one
//      attempt, or with --wait one attempt, then a line on stderr saying who has the keys, then
//      the wait in the keys' queues) while the main thread waits for it or for a
//      stop signal. A stop signal before the
//      grant ends the process at once with 128 + the signal: the server drops the waiter when
//      the connection closes with the process. (A grant already on its way back when the signal
//      came is not released: it ends with its lease, or at once if it is a session hold.)
//   3. Hold. `acquire --session` prints the hold and waits for SIGINT, SIGTERM, SIGHUP or
//      SIGQUIT. `run` starts CMD with HOLDFAST_LOCK_KEY, HOLDFAST_LOCK_HANDLE and
//      HOLDFAST_LOCK_TOKEN (of the first key, in key order, for several) and HOLDFAST_LOCK_KEYS
//      and HOLDFAST_LOCK_TOKENS (every key and its token, one a line, in key order) in its
//      environment and waits for it to exit, passing on the signals
//      sent to holdfast (not those the terminal sent to the whole process group: CMD got
//      those itself). If the lease is lost (a renewal answered lease_lost, or none succeeded
//      before it ran out), `acquire --session` exits 1 and `run` sends CMD SIGTERM.
//   4. Release, then exit: `acquire --session` with 0, `run` with CMD's status (128 + the
//      signal if CMD died of one, as shells report it).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/remote.h"
#include "holdfast/options.h"

namespace holdfast::cli {

struct HoldOptions {
  RemoteOptions remote;
  // KEY in the mode of --shared or --permits N [--take K], then each --key in that mode and
  // each --shared-key shared. More than one: a multi-key group (all or none, one handle).
  std::vector<KeyRequest> keys;
  std::int64_t ttl_ms = 60000;
  std::int64_t wait_ms = -1;  // -1: one attempt
  std::optional<std::string> owner;
  bool session = false;
  std::optional<std::chrono::milliseconds> lock_delay;  // --lock-delay (one key only)
};

// holdfast locks acquire KEY --session: returns the exit code.
int hold_until_stopped(const HoldOptions& options);

// holdfast locks run KEY -- CMD ARGS...: returns the exit code. `conflict_exit_code` is the
// code when the key is not acquired (held, timed out, rate limited); CMD does not run then.
int run_while_holding(const HoldOptions& options, const std::vector<std::string>& command,
                      int conflict_exit_code);

}  // namespace holdfast::cli
