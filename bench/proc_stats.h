// What the kernel says about the processes in a measurement: CPU time of the harness itself
// (getrusage) and of a server's whole process tree (/proc/<pid>/stat and the threads'
// schedstat, of the server and of every descendant, since PostgreSQL serves each connection
// from a forked backend), and a server's resident memory (/proc/<pid>/status VmRSS).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace holdfast::bench {

// User + system CPU seconds this process has used so far.
double self_cpu_seconds();

// User + system CPU seconds used so far by `root` and every live descendant of it: exact (the
// scheduler's nanoseconds) while none of their threads has ended, within one clock tick
// (10 ms) otherwise.
double process_tree_cpu_seconds(pid_t root);

// Resident set size of `pid` in bytes, or -1 if it cannot be read.
std::int64_t resident_bytes(pid_t pid);

}  // namespace holdfast::bench
