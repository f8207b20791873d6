// CPU and memory of the harness and the servers: see proc_stats.h.
#include "proc_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace holdfast::bench {

namespace {

struct StatLine {
  pid_t ppid = 0;
  std::uint64_t ticks = 0;  // utime + stime
};

bool read_stat(pid_t pid, StatLine& out) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  // The command name (field 2) may contain spaces and parentheses; fields resume after the
  // last ')'.
  const auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return false;
  std::istringstream rest(line.substr(close_paren + 2));
  std::string field;
  std::vector<std::string> fields;  // fields 3.. of proc(5)
  while (rest >> field && fields.size() < 13) fields.push_back(field);
  if (fields.size() < 13) return false;
  out.ppid = static_cast<pid_t>(std::strtol(fields[1].c_str(), nullptr, 10));
  out.ticks = std::strtoull(fields[11].c_str(), nullptr, 10) +  // utime (field 14)
              std::strtoull(fields[12].c_str(), nullptr, 10);   // stime (field 15)
  return true;
}

// Nanoseconds on a CPU of every live thread of `pid` (/proc/<pid>/task/*/schedstat, first
// field: the scheduler's own count, not sampled in ticks).
std::uint64_t live_threads_cpu_nanos(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::uint64_t nanos = 0;
  if (DIR* d = opendir(tasks.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(tasks + "/" + e->d_name + "/schedstat");
      std::uint64_t on_cpu = 0;
      if (f >> on_cpu) nanos += on_cpu;
    }
    closedir(d);
  }
  return nanos;
}

// A process's CPU seconds: /proc/<pid>/stat counts every thread it ever had, but in whole
// ticks; the live threads' schedstat is exact but misses threads that have ended. The true
// figure is at least either, and the larger is within a tick of it (exact while no thread has
// ended), so a few seconds at 1 % of a core are measured to the microsecond, not to 10 %.
double process_cpu_seconds(pid_t pid, std::uint64_t ticks) {
  const double from_ticks = static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  const double from_threads = static_cast<double>(live_threads_cpu_nanos(pid)) / 1e9;
  return std::max(from_ticks, from_threads);
}

}  // namespace

double self_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

double process_tree_cpu_seconds(pid_t root) {
  std::unordered_map<pid_t, StatLine> all;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end != '\0') continue;
      StatLine s;
      if (read_stat(static_cast<pid_t>(pid), s)) all.emplace(static_cast<pid_t>(pid), s);
    }
    closedir(d);
  }
  double seconds = 0;
  for (const auto& [pid, s] : all) {
    // Walk up the parent chain; a process counts if `root` is on it (or is it).
    pid_t p = pid;
    for (int depth = 0; depth < 64 && p > 1; ++depth) {
      if (p == root) {
        seconds += process_cpu_seconds(pid, s.ticks);
        break;
      }
      auto it = all.find(p);
      if (it == all.end()) break;
      p = it->second.ppid;
    }
  }
  return seconds;
}

std::int64_t resident_bytes(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtoll(line.c_str() + 6, nullptr, 10) * 1024;  // reported in kB
    }
  }
  return -1;
}

}  // namespace holdfast::bench
