#include "torture/disk_faults.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/eventually.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {
namespace {

// Big enough for a few segments and snapshots of a small table, small enough to fill at once.
constexpr const char* kTmpfsOptions = "size=16m";
// How long a fault may go unnoticed (only a server that never notices reaches it, also on a
// machine busy with other builds), and how long it is kept once noticed.
constexpr auto kNoticeWithin = testing::kEventually;
constexpr auto kKeepFor = std::chrono::milliseconds(400);

bool await_unavailable(const testing::ServerProcess& server) {
  const auto deadline = std::chrono::steady_clock::now() + kNoticeWithin;
  while (std::chrono::steady_clock::now() < deadline) {
    if (store_unavailable(server)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

bool store_unavailable(const testing::ServerProcess& server) {
  const std::string metrics =
      testing::run({"curl", "-s", "--max-time", "2", server.http_url() + "/metrics"}).out;
  return metrics.find("\nholdfast_store_unavailable 1\n") != std::string::npos;
}

DiskFaults::DiskFaults()
    : data_dir_(root_.path() + "/data"),
      control_(root_.path() + "/fault"),
      filler_(root_.path() + "/filler") {
  std::filesystem::create_directory(root_.path() + "/mnt");
  const std::string mount_point = root_.path() + "/mnt";
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, kTmpfsOptions) == 0) {
    mounted_ = true;
    data_dir_ = mount_point + "/data";
    filler_ = mount_point + "/filler";
  } else {
    why_not_fill_ = std::string("cannot mount a small tmpfs for the data dir (needs root): ") +
                    std::strerror(errno);
  }
  std::filesystem::create_directory(data_dir_);
}

DiskFaults::~DiskFaults() {
  clear_control();
  if (mounted_) ::umount2((root_.path() + "/mnt").c_str(), MNT_DETACH);
}

std::vector<std::string> DiskFaults::server_env() const {
  return {std::string("LD_PRELOAD=") + HOLDFAST_FAULT_SHIM, "HOLDFAST_FAULT_DIR=" + data_dir_,
          "HOLDFAST_FAULT_CONTROL=" + control_};
}

void DiskFaults::set_control(std::string_view text) {
  // Written aside and renamed, so the shim never reads half of it.
  const std::string temporary = control_ + ".tmp";
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, control_);
}

void DiskFaults::clear_control() { ::unlink(control_.c_str()); }

FaultResult DiskFaults::fill(testing::ServerProcess& server) {
  {
    std::ofstream out(filler_, std::ios::binary);
    const std::string chunk(4096, 'x');
    while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size())) && out.flush()) {
    }
  }
  const bool noticed = await_unavailable(server);
  std::this_thread::sleep_for(kKeepFor);
  ::unlink(filler_.c_str());
  return {wall_us(), noticed, std::nullopt};
}

FaultResult DiskFaults::fail(testing::ServerProcess& server, std::string_view mode) {
  set_control(mode);
  const bool noticed = await_unavailable(server);
  std::this_thread::sleep_for(kKeepFor);
  clear_control();
  return {wall_us(), noticed, std::nullopt};
}

FaultResult DiskFaults::slow_sync(std::int64_t delay_ms, std::int64_t for_ms) {
  set_control("slow-sync " + std::to_string(delay_ms));
  std::this_thread::sleep_for(std::chrono::milliseconds(for_ms));
  clear_control();
  return {wall_us(), true, std::nullopt};
}

}  // namespace holdfast::torture
