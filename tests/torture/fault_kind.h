// The faults the torture program injects, with the names its --faults option and its summary
// use.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "torture/history.h"

namespace holdfast::torture {

enum class FaultKind {
  kKill9,       // kill -9 the server, start it again on the same data
  kSigstop,     // SIGSTOP the server past the leases, then SIGCONT
  kDisconnect,  // clients vanish: mid-request, while waiting, while holding
  kDiskFull,    // the data dir's small tmpfs fills up, then space is freed
  kEioWrite,    // writes to the log fail with EIO for a while
  kEioSync,     // fdatasync of the log fails with EIO for a while
  kSlowSync,    // every fdatasync takes hundreds of milliseconds for a while
  kDbRestart,   // the PostgreSQL under a node restarts
  kClockJump,   // the server's wall clock jumps by seconds, forward or back, and back again
  // Failovers of the database (the failover backend): the primary is
  kPrimaryFrozen,  // frozen (SIGSTOP), the standby promoted, the old primary resumed
  kPrimaryStop,    // stopped at once (pg_ctl stop -m immediate), the standby promoted
  kPrimaryKill9,   // killed (kill -9), the standby promoted only after the session grace
};

inline constexpr std::array kAllFaultKinds = {
    FaultKind::kKill9,         FaultKind::kSigstop,     FaultKind::kDisconnect,
    FaultKind::kDiskFull,      FaultKind::kEioWrite,    FaultKind::kEioSync,
    FaultKind::kSlowSync,      FaultKind::kDbRestart,   FaultKind::kClockJump,
    FaultKind::kPrimaryFrozen, FaultKind::kPrimaryStop, FaultKind::kPrimaryKill9,
};

inline bool is_failover(FaultKind kind) {
  return kind == FaultKind::kPrimaryFrozen || kind == FaultKind::kPrimaryStop ||
         kind == FaultKind::kPrimaryKill9;
}

inline std::string_view fault_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kKill9:
      return "kill9";
    case FaultKind::kSigstop:
      return "sigstop";
    case FaultKind::kDisconnect:
      return "disconnect";
    case FaultKind::kDiskFull:
      return "disk-full";
    case FaultKind::kEioWrite:
      return "eio-write";
    case FaultKind::kEioSync:
      return "eio-sync";
    case FaultKind::kSlowSync:
      return "slow-sync";
    case FaultKind::kDbRestart:
      return "db-restart";
    case FaultKind::kClockJump:
      return "clock-jump";
    case FaultKind::kPrimaryFrozen:
      return "primary-frozen";
    case FaultKind::kPrimaryStop:
      return "primary-stop";
    case FaultKind::kPrimaryKill9:
      return "primary-kill9";
  }
  return "?";
}

inline std::optional<FaultKind> parse_fault(std::string_view name) {
  for (FaultKind kind : kAllFaultKinds)
    if (fault_name(kind) == name) return kind;
  return std::nullopt;
}

// What an injection did: when the fault ended (recovery is measured from then), whether the
// server showed it noticed (a disk fault it never ran into tests nothing), and the hold of a
// client that vanished while holding, if one did.
struct FaultResult {
  std::int64_t end_us = 0;
  bool noticed = true;
  std::optional<Hold> abandoned;
};

}  // namespace holdfast::torture
