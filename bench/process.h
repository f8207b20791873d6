// Processes the harness starts (the servers under test), the temporary folders they live in,
// and the clean-up that must happen however the harness ends.
//
// Lifecycle of a server:
//   1. spawn(): fork, put the child in its own process group, ask the kernel to SIGKILL it if
//      the harness dies (PR_SET_PDEATHSIG), send its output to a log file, exec.
//   2. The pid goes into a process-wide registry with the signal that stops it at once.
//   3. stop(): SIGTERM (or the server's own fast-shutdown signal), wait, SIGKILL after a grace
//      period, reap; the pid leaves the registry.
//   4. A first SIGINT/SIGTERM to the harness only raises interrupted(): loops notice it, the
//      run unwinds, and destructors stop servers and remove folders as in 3. A second one
//      signals every registered pid and exits at once.
// Servers that daemonize (PostgreSQL via pg_ctl) are registered by the pid they report.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace holdfast::bench {

// Installs the SIGINT/SIGTERM handlers of step 4 and ignores SIGPIPE.
void install_signal_handlers();
bool interrupted();

// Step 2, for pids the harness did not fork itself.
void register_pid(pid_t pid, int stop_signal);
void unregister_pid(pid_t pid);

// True while `pid` exists and is not a zombie (works for processes that are not our children).
bool process_alive(pid_t pid);

// Sends `sig` to a process that is not our child, then waits up to `timeout` for it to go.
// Returns false if it is still there.
bool signal_and_wait(pid_t pid, int sig, std::chrono::milliseconds timeout);

class ChildProcess {
 public:
  ChildProcess() = default;
  // Starts argv[0] (looked up on PATH) with output appended to `log_path`. Throws
  // std::runtime_error if fork fails; an exec failure shows as an early exit (running() false).
  static ChildProcess spawn(const std::vector<std::string>& argv,
                            const std::filesystem::path& log_path);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // False once the process has exited (and been reaped).
  bool running();
  // Step 3: `sig`, then SIGKILL after `grace`; always reaps. Idempotent.
  void stop(int sig = 15, std::chrono::milliseconds grace = std::chrono::seconds(10));
  // SIGKILL now and reap (the crash in the restart workload).
  void kill_hard();

 private:
  pid_t pid_ = -1;
};

// Runs a command to completion, capturing stdout+stderr. Returns the exit status (or -1).
int run_command(const std::vector<std::string>& argv, std::string& output);

// The first line of a command's output, or "" (version strings for the report).
std::string command_first_line(const std::vector<std::string>& argv);

// A folder made by mkdtemp under $TMPDIR (or /tmp), world-readable so that servers running as
// another user (postgres) can reach their sub-folders, removed with its contents on
// destruction unless keep() was called.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace holdfast::bench
