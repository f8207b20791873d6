// Jumps of a server's wall clock, as a manual `date`, an NTP step or a resumed VM make them:
// libfaketime (Debian's faketime package) is preloaded into the server and reads its offset
// from a file on every clock call, so the offset changes while the server runs. Only the wall
// clock moves (FAKETIME_DONT_FAKE_MONOTONIC=1), as a real step does: the monotonic clock never
// jumps. monotonic_too moves it as well, which no real clock step does: a way to see the checks
// catch a server whose leases follow a jumping clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torture/fault_kind.h"

namespace holdfast::torture {

class ClockFaults {
 public:
  // The library's path, or "" when faketime is not installed.
  static std::string library();

  explicit ClockFaults(bool monotonic_too = false);  // the offset starts at 0
  ~ClockFaults();
  ClockFaults(const ClockFaults&) = delete;
  ClockFaults& operator=(const ClockFaults&) = delete;

  // The server's environment: LD_PRELOAD (after `preload_first`, if any) and libfaketime's.
  std::vector<std::string> server_env(const std::string& preload_first = "") const;
  // The clock jumps by `seconds` (forward when positive), stays so for hold_ms, then jumps
  // back: two jumps, in both directions. Noticed when the server's TIME (its wall clock, on
  // RESP port `port`) showed the jump while it lasted.
  FaultResult jump(std::int64_t seconds, std::int64_t hold_ms, int port);

 private:
  void set_offset(std::int64_t seconds);

  bool monotonic_too_;
  std::string dir_;
  std::string file_;
};

}  // namespace holdfast::torture
