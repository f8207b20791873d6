#include "support/process.h"

#include "core/text.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace holdfast::testing {
namespace {

std::vector<char*> to_argv(const std::vector<std::string>& args) {
  std::vector<char*> v;
  for (const auto& a : args) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Forks on one thread that lives as long as the test process, and makes the child die with
// that thread (PR_SET_PDEATHSIG), so with the process: a test binary that is killed (a
// timeout, a SIGPIPE) leaves none of the servers started here running. (The signal follows the
// thread that forked, and tests start servers from threads of their own, std::async ones
// included. A PostgreSQL of the tests is not among them: pg_ctl detaches it, so it leaves a
// DeathWatch instead.) `in_child` runs in the child, after fork: only what is safe there, and
// it ends in exec or _exit.
pid_t fork_for_test(const std::function<void()>& in_child) {
  struct Request {
    const std::function<void()>* in_child;
    pid_t pid = -1;
    bool done = false;
  };
  // Never destroyed: the thread waits on them until the process ends, and a condition
  // variable destroyed at exit with a waiter would hang the exit.
  struct Spawner {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Request*> requests;
  };
  static Spawner* const spawner = [] {
    auto* sp = new Spawner;
    std::thread([sp] {
      const pid_t parent = getpid();
      std::unique_lock lock(sp->mu);
      for (;;) {
        sp->cv.wait(lock, [sp] { return !sp->requests.empty(); });
        Request* r = sp->requests.front();
        sp->requests.pop_front();
        r->pid = fork();
        if (r->pid == 0) {
          prctl(PR_SET_PDEATHSIG, SIGKILL);
          if (getppid() != parent) _exit(127);  // the test had already gone
          (*r->in_child)();
          _exit(127);
        }
        r->done = true;
        sp->cv.notify_all();
      }
    }).detach();
    return sp;
  }();
  Request r{&in_child};
  std::unique_lock lock(spawner->mu);
  spawner->requests.push_back(&r);
  spawner->cv.notify_all();
  spawner->cv.wait(lock, [&] { return r.done; });
  return r.pid;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const std::string& input,
              const std::vector<std::string>& extra_env) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  // O_CLOEXEC: a child forked by another thread at the same moment must not inherit these ends,
  // or it would hold this child's stdin open forever.
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
      pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      close(fd);
    for (const auto& e : extra_env) putenv(const_cast<char*>(e.c_str()));
    auto args = to_argv(argv);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::thread writer([&] {
    std::size_t off = 0;
    while (off < input.size()) {
      ssize_t n = ::write(in_pipe[1], input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    close(in_pipe[1]);
  });
  RunResult r;
  std::thread err_reader([&] { r.err = read_all(err_pipe[0]); });
  r.out = read_all(out_pipe[0]);
  err_reader.join();
  writer.join();
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = decode_status(status);
  return r;
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
}

Child::Child(Child&& o) noexcept : pid_(o.pid_), out_fd_(o.out_fd_), buffer_(std::move(o.buffer_)) {
  o.pid_ = -1;
  o.out_fd_ = -1;
}

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      waitpid(pid_, &status, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
    pid_ = o.pid_;
    out_fd_ = o.out_fd_;
    buffer_ = std::move(o.buffer_);
    o.pid_ = -1;
    o.out_fd_ = -1;
  }
  return *this;
}

Child Child::start(const std::vector<std::string>& argv, bool capture_stderr,
                   const std::vector<std::string>& extra_env) {
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  auto args = to_argv(argv);
  const pid_t pid = fork_for_test([&] {
    dup2(out_pipe[1], 1);
    if (capture_stderr) dup2(out_pipe[1], 2);
    close(out_pipe[0]);
    close(out_pipe[1]);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    for (const auto& e : extra_env) putenv(const_cast<char*>(e.c_str()));
    execvp(args[0], args.data());
  });
  if (pid < 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw std::runtime_error("fork");
  }
  close(out_pipe[1]);
  Child c;
  c.pid_ = pid;
  c.out_fd_ = out_pipe[0];
  return c;
}

bool Child::read_line(std::string* line, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 || out_fd_ < 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left));
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(out_fd_, buf, sizeof(buf));
    if (n <= 0) {
      *line = buffer_;
      buffer_.clear();
      return false;
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

void Child::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

int Child::wait() {
  if (pid_ <= 0) return -1;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return decode_status(status);
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quoted(a);
  return out;
}

DeathWatch::DeathWatch(const std::string& script) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  // The shell's `read` (nothing is ever written) returns once the last writer is gone: this
  // process's end, closed by the kernel however the process ends (children it forks hold it
  // only until they exec: O_CLOEXEC).
  const std::string command = "while read -r _; do :; done; " + script;
  // A plain fork, not fork_for_test(): that child would die with the test, before its turn.
  // Between fork and exec only async-signal-safe calls.
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::setsid();
    ::dup2(fds[0], STDIN_FILENO);  // the copy is not close-on-exec
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[0]);
  pid_ = pid;
  fd_ = fds[1];
}

DeathWatch::~DeathWatch() {
  ::kill(pid_, SIGKILL);  // before the pipe ends, so the script never runs
  int status = 0;
  ::waitpid(pid_, &status, 0);
  ::close(fd_);
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/holdfast-test-XXXXXX";
  char* p = mkdtemp(tmpl);
  if (p == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace holdfast::testing
