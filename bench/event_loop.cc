// EventLoop: see event_loop.h for the iteration.
#include "event_loop.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "clock.h"

namespace holdfast::bench {

namespace {
[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("event loop: ") + what + ": " + std::strerror(errno));
}
}  // namespace

EventLoop::EventLoop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)), events_(256) {
  if (epoll_fd_ < 0) fail("epoll_create1");
}

EventLoop::~EventLoop() { close(epoll_fd_); }

void EventLoop::watch(int fd, std::uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl add");
}

void EventLoop::rewatch(int fd, std::uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0) fail("epoll_ctl mod");
}

void EventLoop::unwatch(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::mark_dirty(Flushable* f) {
  if (f->marked_) return;
  f->marked_ = true;
  dirty_.push_back(f);
}

void EventLoop::forget(Flushable* f) {
  std::erase(dirty_, f);
  std::replace(flushing_.begin(), flushing_.end(), f, static_cast<Flushable*>(nullptr));
  f->marked_ = false;
}

void EventLoop::add_timer(std::int64_t at_ns, TimerHandler* handler, std::uint64_t cookie) {
  timers_.push(Timer{at_ns, timer_seq_++, handler, cookie});
}

void EventLoop::clear_timers() {
  while (!timers_.empty()) timers_.pop();
}

void EventLoop::flush_dirty() {
  // A flush can mark another connection dirty (it never does today, but a driver with a
  // multi-step operation may), so swap and repeat until quiet.
  while (!dirty_.empty()) {
    flushing_.swap(dirty_);
    dirty_.clear();
    for (std::size_t i = 0; i < flushing_.size(); ++i) {
      Flushable* f = flushing_[i];
      if (f == nullptr) continue;  // forgotten by an earlier flush
      f->marked_ = false;
      f->flush();
    }
    flushing_.clear();
  }
}

int EventLoop::wait(std::int64_t wait_ns) {
  timespec timeout{static_cast<time_t>(wait_ns / kNsPerSec),
                   static_cast<long>(wait_ns % kNsPerSec)};
  const int n =
      epoll_pwait2(epoll_fd_, events_.data(), static_cast<int>(events_.size()), &timeout, nullptr);
  if (n < 0 && errno != EINTR) fail("epoll_pwait2");
  return std::max(n, 0);
}

int EventLoop::poll_then_wait(std::int64_t wake_ns) {
  int n = wait(0);
  if (n > 0) return n;  // busy: no idle spell to account for
  for (;;) {
    const std::int64_t now = now_ns();
    if (now >= wake_ns) {  // a timer (or the deadline) is due: that is the work found
      idle_poll_.found_work(now / 1000);
      return 0;
    }
    if (!idle_poll_.keep_polling(now / 1000)) break;
    // Any other runnable thread on this CPU (a server's process, say) goes first.
    sched_yield();
    n = wait(0);
    if (n > 0) {
      idle_poll_.found_work(now_ns() / 1000);
      return n;
    }
  }
  n = wait(std::max<std::int64_t>(0, wake_ns - now_ns()));
  idle_poll_.woke(now_ns() / 1000);
  return n;
}

void EventLoop::run_once(std::int64_t deadline_ns) {
  std::int64_t wake_ns = deadline_ns;
  if (!timers_.empty()) wake_ns = std::min(wake_ns, timers_.top().at_ns);
  // Work queued outside an iteration (the first requests of a measurement) goes out first.
  flush_dirty();
  const int n = idle_poll_.max() > 0 ? poll_then_wait(wake_ns)
                                     : wait(std::max<std::int64_t>(0, wake_ns - now_ns()));
  for (int i = 0; i < n; ++i) {
    static_cast<IoHandler*>(events_[i].data.ptr)->on_io(events_[i].events);
    // What this socket's replies made the workload ask goes out now, not after every other
    // ready socket has been read: one write per connection all the same, without making each
    // request wait for the rest of the batch (a server that syncs once per pass of its loop,
    // as Redis AOF does, would otherwise see it a pass late).
    if (!dirty_.empty()) {
      flush_dirty();
      if (after_flush_ && !library_shape()) after_flush_(now_ns());
    }
  }
  if (n == static_cast<int>(events_.size())) events_.resize(events_.size() * 2);

  const std::int64_t now = now_ns();
  while (!timers_.empty() && timers_.top().at_ns <= now) {
    const Timer t = timers_.top();
    timers_.pop();
    t.handler->on_timer(t.cookie);
  }

  flush_dirty();
  if (after_flush_ && !library_shape()) after_flush_(now_ns());
}

void EventLoop::sent(const void* sender) {
  if (after_send_) after_send_(sender, now_ns());
}

}  // namespace holdfast::bench
