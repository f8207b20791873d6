// Machine description: see machine.h.
#include "machine.h"

#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace holdfast::bench {

MachineInfo describe_machine() {
  MachineInfo m;
  m.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) m.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  utsname u{};
  if (uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release;
  struct sysinfo si {};
  if (sysinfo(&si) == 0) {
    m.memory_gib = static_cast<double>(si.totalram) * si.mem_unit / (1024.0 * 1024 * 1024);
  }
  std::ifstream loadavg("/proc/loadavg");
  std::string a, b, c;
  if (loadavg >> a >> b >> c) m.load_average = a + " " + b + " " + c;
  return m;
}

}  // namespace holdfast::bench
