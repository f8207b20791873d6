// A description of the machine a run happened on, for the report: figures from different
// machines are not comparable, and the load average tells whether others were busy too.
#pragma once

#include <string>

namespace holdfast::bench {

struct MachineInfo {
  int cpus = 0;           // online CPUs (nproc)
  std::string cpu_model;  // /proc/cpuinfo "model name"
  std::string kernel;     // uname -sr
  double memory_gib = 0;
  std::string load_average;  // /proc/loadavg, first three fields
};

MachineInfo describe_machine();

}  // namespace holdfast::bench
