#include "cli/signal_watch.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace holdfast::cli {
namespace {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Reads the eventfd's counter if it is set; true if it was.
bool drain(int fd) {
  std::uint64_t count = 0;
  return ::read(fd, &count, sizeof count) == static_cast<ssize_t>(sizeof count);
}

}  // namespace

SignalWatch::SignalWatch() {
  sigemptyset(&watched_);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD})
    sigaddset(&watched_, s);
  if (int e = ::pthread_sigmask(SIG_BLOCK, &watched_, &original_); e != 0) {
    errno = e;
    throw_errno("pthread_sigmask");
  }
  signal_fd_ = ::signalfd(-1, &watched_, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) throw_errno("signalfd");
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(signal_fd_);
    throw_errno("eventfd");
  }
}

SignalWatch::~SignalWatch() {
  ::close(signal_fd_);
  ::close(wake_fd_);
  ::pthread_sigmask(SIG_SETMASK, &original_, nullptr);
}

SignalWatch::Event SignalWatch::wait() {
  for (;;) {
    // A wake first: a stop signal that races with the end of an acquire must see the hold.
    if (drain(wake_fd_)) return Event{Event::kWake};
    signalfd_siginfo info{};
    if (::read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      return Event{Event::kSignal, static_cast<int>(info.ssi_signo), info.ssi_code == SI_KERNEL};
    }
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) throw_errno("poll");
  }
}

bool SignalWatch::woken() { return drain(wake_fd_); }

void SignalWatch::wake() {
  const std::uint64_t one = 1;
  // Only fails if the counter would overflow, and then it is set anyway.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

bool SignalWatch::is_stop_signal(int signal) {
  return signal == SIGINT || signal == SIGTERM || signal == SIGHUP || signal == SIGQUIT;
}

}  // namespace holdfast::cli
