// Holds with realistic key and principal lengths, for the store's measuring tools
// (wal-restart-time, wal-snapshot-stall).
#pragma once

#include <cstdint>
#include <string>

#include "core/hold.h"

namespace holdfast::wal::tools {

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

}  // namespace holdfast::wal::tools
