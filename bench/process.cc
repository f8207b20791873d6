// Server processes, temp folders and signal clean-up: see process.h for the lifecycle.
#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace holdfast::bench {

namespace {

// The registry is a fixed array of atomics so that the signal handler can read it safely.
struct Registered {
  std::atomic<pid_t> pid{0};
  std::atomic<int> signal{0};
};
std::array<Registered, 64> g_registry;
std::atomic<int> g_interrupts{0};

void on_signal(int) {
  if (g_interrupts.fetch_add(1) == 0) return;  // first: let the run unwind
  for (auto& r : g_registry) {
    const pid_t pid = r.pid.load();
    if (pid > 0) kill(pid, r.signal.load());
  }
  _exit(130);
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool interrupted() { return g_interrupts.load() > 0; }

void register_pid(pid_t pid, int stop_signal) {
  for (auto& r : g_registry) {
    pid_t expected = 0;
    if (r.pid.compare_exchange_strong(expected, pid)) {
      r.signal.store(stop_signal);
      return;
    }
  }
}

void unregister_pid(pid_t pid) {
  for (auto& r : g_registry) {
    pid_t expected = pid;
    r.pid.compare_exchange_strong(expected, 0);
  }
}

bool process_alive(pid_t pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  // A daemon's zombie (its parent is init in a container, which may be slow to reap) still
  // answers kill(0); its state letter in /proc says it is gone.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close_paren = line.rfind(')');
  return close_paren == std::string::npos || close_paren + 2 >= line.size() ||
         line[close_paren + 2] != 'Z';
}

bool signal_and_wait(pid_t pid, int sig, std::chrono::milliseconds timeout) {
  if (!process_alive(pid)) return true;
  kill(pid, sig);
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (!process_alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !process_alive(pid);
}

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv,
                                 const std::filesystem::path& log_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string log = log_path.string();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the harness died before prctl took effect
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGPIPE, &sa, nullptr);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (null_fd >= 0) dup2(null_fd, 0);
    execvp(args[0], args.data());
    _exit(127);
  }
  ChildProcess child;
  child.pid_ = pid;
  register_pid(pid, SIGKILL);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() { stop(); }

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  unregister_pid(pid_);
  pid_ = -1;
  return false;
}

void ChildProcess::stop(int sig, std::chrono::milliseconds grace) {
  if (!running()) return;
  kill(pid_, sig);
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until) {
    if (!running()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill_hard();
}

void ChildProcess::kill_hard() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_pid(pid_);
  pid_ = -1;
}

int run_command(const std::vector<std::string>& argv, std::string& output) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string command_first_line(const std::vector<std::string>& argv) {
  std::string out;
  if (run_command(argv, out) != 0) return "";
  return out.substr(0, out.find('\n'));
}

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + templ + ": " + std::strerror(errno));
  }
  chmod(templ.c_str(), 0755);
  path_ = templ;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace holdfast::bench
