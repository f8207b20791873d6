#include "torture/clock_faults.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "support/resp_client.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {

std::string ClockFaults::library() {
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                           "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
                           "/usr/lib/faketime/libfaketime.so.1"}) {
    if (::access(path, R_OK) == 0) return path;
  }
  return "";
}

ClockFaults::ClockFaults(bool monotonic_too) : monotonic_too_(monotonic_too) {
  std::string pattern = "/tmp/holdfast-clock-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  file_ = dir_ + "/offset";
  set_offset(0);
}

ClockFaults::~ClockFaults() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::string> ClockFaults::server_env(const std::string& preload_first) const {
  std::vector<std::string> env = {
      "LD_PRELOAD=" + (preload_first.empty() ? "" : preload_first + ":") + library(),
      "FAKETIME_TIMESTAMP_FILE=" + file_,
      // Read the file on every call: the jump takes effect at once.
      "FAKETIME_NO_CACHE=1",
  };
  if (!monotonic_too_) env.push_back("FAKETIME_DONT_FAKE_MONOTONIC=1");
  return env;
}

void ClockFaults::set_offset(std::int64_t seconds) {
  // Written whole and renamed over, so a reader never sees half a line.
  const std::string temp = file_ + ".new";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << (seconds >= 0 ? "+" : "") << seconds << "\n";
  }
  std::filesystem::rename(temp, file_);
}

FaultResult ClockFaults::jump(std::int64_t seconds, std::int64_t hold_ms, int port) {
  set_offset(seconds);
  const auto began = std::chrono::steady_clock::now();
  bool noticed = false;
  try {
    testing::RespClient client = testing::RespClient::tcp(port);
    const testing::RespValue time = client.call({"TIME"});
    if (time.items.size() == 2) {
      const std::int64_t server_s = std::stoll(time.items[0].str);
      const std::int64_t off = server_s - wall_us() / 1'000'000;
      noticed = off > seconds - 2 && off < seconds + 2;
    }
  } catch (const std::exception&) {
    // Not noticed: the fault counts as unseen, which the run reports.
  }
  std::this_thread::sleep_until(began + std::chrono::milliseconds(hold_ms));
  set_offset(0);
  return {wall_us(), noticed, std::nullopt};
}

}  // namespace holdfast::torture
