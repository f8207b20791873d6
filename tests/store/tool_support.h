// What the store's measuring tools (wal-restart-time, wal-snapshot-stall) share: a fresh data
// dir, lease holds with realistic key and principal lengths, and the process's memory.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "core/hold.h"
#include "store/store.h"

namespace holdfast::wal::tools {

// A new empty directory /tmp/<name>-XXXXXX; none (after printing why) if it cannot be made.
inline std::optional<std::string> make_temp_dir(const std::string& name) {
  std::string pattern = "/tmp/" + name + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return std::nullopt;
  }
  return pattern;
}

inline HoldState make_hold(std::uint64_t i, Millis now) {
  HoldState h;
  h.key = "tenant-" + std::to_string(i % 97) + "/orders/" + std::to_string(i);
  for (std::size_t b = 0; b < h.handle.bytes.size(); ++b)
    h.handle.bytes[b] = static_cast<std::uint8_t>(i * 131 + b);
  h.token = i + 1;
  h.held_by = "user:user-" + std::to_string(i % 1000);
  h.owner = "worker-" + std::to_string(i % 64);
  h.acquired_at = now;
  h.lease_expires_at = now + 3'600'000;
  return h;
}

// `holds` lease holds, tokens 1..holds, each leased for an hour from `now`.
inline DurableState make_state(std::uint64_t holds, Millis now) {
  DurableState state;
  state.last_token = holds;
  state.holds.reserve(holds);
  for (std::uint64_t i = 0; i < holds; ++i) state.holds.push_back(make_hold(i, now));
  return state;
}

// A line "<field>: <n> kB" of /proc/self/status, in KiB (0 if missing).
inline std::uint64_t proc_status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  return 0;
}

// Starts the peak resident size (VmHWM) over from the current one.
inline void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace holdfast::wal::tools
