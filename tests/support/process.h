// Running other programs from tests: run to completion capturing output, or start in the
// background and kill later.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support/eventually.h"

namespace holdfast::testing {

struct RunResult {
  int exit_code = -1;  // -1 if killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] with its arguments, feeding `input` on stdin; waits for it.
RunResult run(const std::vector<std::string>& argv, const std::string& input = "",
              const std::vector<std::string>& extra_env = {});

// A background child with its stdout readable line by line.
class Child {
 public:
  Child() = default;
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;

  // `extra_env` ("NAME=value") is added to the child's environment.
  static Child start(const std::vector<std::string>& argv, bool capture_stderr = false,
                     const std::vector<std::string>& extra_env = {});
  // Reads one line of the child's stdout (without the newline); empty optional-like "" plus
  // false at EOF or when `timeout_ms` passes.
  bool read_line(std::string* line, int timeout_ms = kEventuallyMs);
  void signal(int sig);
  // Waits for exit; returns the exit code, or -signal if killed.
  int wait();
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
};

// Runs a shell script once this test process is gone, however it ended (a SIGKILL, a ctest
// timeout, a crash), unless the watch was destroyed first. For servers that outlive a killed
// test because they detach themselves (PostgreSQL, which pg_ctl starts in a session of its
// own): the script stops them and removes their folders. The watcher is a `sh` in a session of
// its own (a kill of the test's process group spares it) that waits for the end of a pipe whose
// only writer is this process.
// argv as one shell command line (each word quoted by core/text.h's shell_quoted).
std::string shell_command(const std::vector<std::string>& argv);

class DeathWatch {
 public:
  explicit DeathWatch(const std::string& script);  // throws std::runtime_error
  ~DeathWatch();                                   // the script does not run
  DeathWatch(const DeathWatch&) = delete;
  DeathWatch& operator=(const DeathWatch&) = delete;

 private:
  pid_t pid_ = -1;
  int fd_ = -1;  // the pipe's only writer
};

// A fresh empty directory under /tmp, removed with its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

}  // namespace holdfast::testing
