// Faults on the embedded store's disk, seen by the real server:
//  - a full disk: the data dir lives on a small tmpfs this program mounts (root only), and a
//    filler file takes every free byte until it is deleted;
//  - EIO on write or on sync, and slow syncs: the server runs with the fault shim preloaded
//    (fault_shim.cc), which fails or delays those calls on files under the data dir while the
//    control file names the fault.
// Each injection waits until the server reports the fault (holdfast_store_unavailable 1 on
// /metrics), keeps it a little longer, then clears it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"
#include "support/server_process.h"
#include "torture/fault_kind.h"

namespace holdfast::torture {

class DiskFaults {
 public:
  // Mounts the tmpfs when it can; can_fill() and why_not_fill() say how that went.
  DiskFaults();
  ~DiskFaults();  // clears any fault and unmounts
  DiskFaults(const DiskFaults&) = delete;
  DiskFaults& operator=(const DiskFaults&) = delete;

  const std::string& data_dir() const { return data_dir_; }
  bool can_fill() const { return mounted_; }
  const std::string& why_not_fill() const { return why_not_fill_; }
  // The environment the server needs for the shim faults.
  std::vector<std::string> server_env() const;

  FaultResult fill(testing::ServerProcess& server);
  // `mode` is "write" or "sync" (fault_shim.cc).
  FaultResult fail(testing::ServerProcess& server, std::string_view mode);
  // Every sync takes `delay_ms` longer, for `for_ms`.
  FaultResult slow_sync(std::int64_t delay_ms, std::int64_t for_ms);

 private:
  void set_control(std::string_view text);
  void clear_control();

  testing::TempDir root_;
  std::string data_dir_;
  std::string control_;
  std::string filler_;
  bool mounted_ = false;
  std::string why_not_fill_;
};

// Whether the server's /metrics says its store is unavailable.
bool store_unavailable(const testing::ServerProcess& server);

}  // namespace holdfast::torture
