// Two-level locking and verified release; the algorithm is described in two_level.h.
#include "two_level.h"

#include <algorithm>
#include <exception>
#include <iostream>

namespace holdfast::sql {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

void report_suppressed(const AdvisoryLockOptions& options,
                       const AdvisoryLockReleaseFailed& failure) noexcept {
  try {
    if (options.on_suppressed_release_failure) {
      options.on_suppressed_release_failure(failure);
    } else {
      std::clog << "holdfast::sql: " << failure.what() << " (while fn's exception propagates)\n";
    }
  } catch (...) {
    // fn's exception is the one the caller must see; a failing reporter cannot replace it.
  }
}

}  // namespace

milliseconds database_wait_budget(steady_clock::time_point deadline, steady_clock::time_point now) {
  // Round up, so a budget never ends before the deadline it serves.
  const auto left = std::chrono::ceil<milliseconds>(deadline - now);
  return std::max(left, kMinDatabaseWait);
}

void check_arguments(std::string_view name, const AdvisoryLockOptions& options) {
  if (name.empty()) {
    throw InvalidArgumentError("INVALID_ARGUMENT", "advisory lock name must not be empty");
  }
  if (options.timeout < milliseconds::zero()) {
    throw InvalidArgumentError("INVALID_ARGUMENT", "advisory lock '" + std::string(name) +
                                                       "': timeout must be >= 0 ms, got " +
                                                       std::to_string(options.timeout.count()));
  }
}

void run_two_level(LocalLockTable& local, std::string_view name, const AdvisoryLockOptions& options,
                   DatabaseLock& database, detail::FunctionRef body) {
  check_arguments(name, options);
  const std::string lock_name(name);
  const auto deadline = steady_clock::now() + options.timeout;

  std::optional<LocalLockTable::Guard> in_process = local.acquire(lock_name, deadline);
  if (!in_process) {
    throw LockTimeoutError(lock_name, options.timeout,
                           "advisory lock '" + lock_name + "': not acquired within " +
                               std::to_string(options.timeout.count()) +
                               " ms (waiting behind another caller in this process)");
  }

  const milliseconds budget = database_wait_budget(deadline, steady_clock::now());
  if (!database.acquire(budget)) {
    throw LockTimeoutError(lock_name, options.timeout,
                           "advisory lock '" + lock_name + "' (" + database.database() + " " +
                               database.describe() + "): not acquired within " +
                               std::to_string(options.timeout.count()) +
                               " ms (the database waited " + std::to_string(budget.count()) +
                               " ms; held by another session)");
  }

  try {
    body();
  } catch (...) {
    std::optional<std::string> failure;
    try {
      failure = database.finish(/*fn_succeeded=*/false);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception during release";
    }
    if (failure) report_suppressed(options, {lock_name, database.database(), *failure});
    throw;
  }
  if (auto failure = database.finish(/*fn_succeeded=*/true)) {
    throw AdvisoryLockReleaseFailed(lock_name, database.database(), *failure);
  }
}

}  // namespace holdfast::sql
