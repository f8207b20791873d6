#include "fanout.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "clock.h"
#include "net.h"
#include "proc_stats.h"

namespace holdfast::bench {
namespace {

constexpr char kChannel[] = "bench:fanout";
const std::string kMessage(32, 'm');

std::string command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// A connection that sent `cmd` and read at least its first reply line.
int open_with(std::uint16_t port, const std::string& cmd) {
  const int fd = connect_loopback(port, 5000);
  if (fd < 0) throw std::runtime_error("connect: " + std::string(std::strerror(errno)));
  std::string reply;
  if (!send_all(fd, cmd, 5000)) {
    ::close(fd);
    throw std::runtime_error("send failed");
  }
  while (reply.find("\r\n") == std::string::npos || reply.front() == '*' || reply.front() == '>') {
    // A confirmation is an array (or push) of three: read until its count (":N\r\n") came.
    if (!recv_some(fd, reply, 5000)) {
      ::close(fd);
      throw std::runtime_error("no reply to " + cmd.substr(0, 40));
    }
    if (reply.front() == '-') break;
    if ((reply.front() == '*' || reply.front() == '>') &&
        reply.find("\r\n:") != std::string::npos && reply.ends_with("\r\n"))
      break;
  }
  if (reply.front() == '-') {
    ::close(fd);
    throw std::runtime_error("refused: " + reply.substr(0, 200));
  }
  return fd;
}

// An HTTP connection that sent `GET /v1/events` and read the response head and the stream's
// first comment (sent once events flow).
int open_stream(std::uint16_t port) {
  const int fd = connect_loopback(port, 5000);
  if (fd < 0) throw std::runtime_error("connect: " + std::string(std::strerror(errno)));
  std::string got;
  if (!send_all(fd, "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 5000)) {
    ::close(fd);
    throw std::runtime_error("send failed");
  }
  while (got.find("holdfast lock events") == std::string::npos) {
    if (!recv_some(fd, got, 5000) || (got.size() > 12 && !got.starts_with("HTTP/1.1 200"))) {
      ::close(fd);
      throw std::runtime_error("GET /v1/events answered: " + got.substr(0, 200));
    }
  }
  return fd;
}

// A counter of the server's, from GET /metrics.
std::int64_t metric(std::uint16_t port, const std::string& counter) {
  if (port == 0) throw std::runtime_error("the target has no HTTP port for its metrics");
  const int fd = connect_loopback(port, 5000);
  if (fd < 0) throw std::runtime_error("connect: " + std::string(std::strerror(errno)));
  std::string got;
  const bool sent =
      send_all(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 5000);
  while (sent && recv_some(fd, got, 5000)) {
  }
  ::close(fd);
  const std::string name = "\n" + counter + " ";
  const std::size_t at = got.find(name);
  if (at == std::string::npos) throw std::runtime_error("no " + counter + " in /metrics");
  return std::stoll(got.substr(at + name.size(), 24));
}

constexpr char kEventsMade[] = "holdfast_events_total";
constexpr char kDropped[] = "holdfast_event_watchers_dropped_total";

}  // namespace

Watchers::Watchers(const Target& target, int count, Readers kind, double open_after_s)
    : http_port_(target.http_port()), resp_port_(target.resp_port()), kind_(kind) {
  if (http_port_ == 0) throw std::runtime_error("the target has no HTTP port for its metrics");
  events_at_start_ = metric(http_port_, kEventsMade);
  dropped_at_start_ = metric(http_port_, kDropped);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (count == 0) return;
  if (open_after_s <= 0) {
    try {
      open(count);
    } catch (...) {
      for (int fd : fds_) ::close(fd);
      ::close(wake_fd_);
      throw;
    }
    thread_ = std::thread([this] { run(); });
    return;
  }
  open_done_ = false;
  thread_ = std::thread([this, count, open_after_s] {
    if (sleep_for(open_after_s)) {
      try {
        open(count);
      } catch (const std::exception& e) {
        open_error_ = e.what();
      }
    }
    open_done_ = true;
    run();
  });
}

void Watchers::open(int count) {
  for (int i = 0; i < count; ++i)
    fds_.push_back(kind_ == Readers::kStreams ? open_stream(http_port_)
                                              : open_with(resp_port_, command({"LOCK.WATCH"})));
}

std::int64_t Watchers::events_made() const {
  if (open_done_ && !open_error_.empty()) throw std::runtime_error(open_error_);
  return metric(http_port_, kEventsMade) - events_at_start_;
}

std::int64_t Watchers::dropped() const { return metric(http_port_, kDropped) - dropped_at_start_; }

Watchers::~Watchers() {
  stop_ = true;
  std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  for (int fd : fds_) ::close(fd);
  ::close(wake_fd_);
}

bool Watchers::sleep_for(double seconds) {
  pollfd wake{wake_fd_, POLLIN, 0};
  const std::int64_t until = now_ns() + static_cast<std::int64_t>(seconds * kNsPerSec);
  for (std::int64_t left = until - now_ns(); left > 0 && !stop_; left = until - now_ns())
    (void)::poll(&wake, 1, static_cast<int>(std::min<std::int64_t>(left / kNsPerMs + 1, 1000)));
  return !stop_;
}

void Watchers::run() {
  if (kind_ == Readers::kStalled) {
    while (sleep_for(3600)) {
    }  // reads nothing, until destroyed
    return;
  }
  std::vector<pollfd> polls;
  for (int fd : fds_) polls.push_back({fd, POLLIN, 0});
  polls.push_back({wake_fd_, POLLIN, 0});
  char buf[1 << 16];
  while (!stop_) {
    if (::poll(polls.data(), polls.size(), 1000) <= 0) continue;
    for (std::size_t i = 0; i + 1 < polls.size(); ++i) {
      if ((polls[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      for (;;) {
        const ssize_t n = ::recv(polls[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0) break;
        bytes_ += static_cast<std::uint64_t>(n);
        if (static_cast<std::size_t>(n) < sizeof(buf)) break;
      }
    }
  }
}

void publish_window(Target& target, const PublishShape& shape, PublishResult& total) {
  total.target = target.name();
  total.shape = shape;
  if (total.failed) return;
  // A thread of its own, as measure() runs each window (measurement.h says why).
  std::thread window([&] {
    std::vector<int> subscribers;
    int publisher = -1;
    auto close_all = [&] {
      for (int fd : subscribers) ::close(fd);
      if (publisher >= 0) ::close(publisher);
    };
    try {
      const std::uint16_t port = target.resp_port();
      if (port == 0) throw std::runtime_error("the target speaks no RESP");
      for (int i = 0; i < shape.subscribers; ++i)
        subscribers.push_back(open_with(port, command({"SUBSCRIBE", kChannel})));
      publisher = connect_loopback(port, 5000);
      if (publisher < 0) throw std::runtime_error("connect failed");
      const std::string frame = "*3\r\n$7\r\nmessage\r\n$" + std::to_string(sizeof(kChannel) - 1) +
                                "\r\n" + kChannel + "\r\n$" + std::to_string(kMessage.size()) +
                                "\r\n" + kMessage + "\r\n";
      const std::string publish = command({"PUBLISH", kChannel, kMessage});
      const int ep = ::epoll_create1(EPOLL_CLOEXEC);
      for (std::size_t i = 0; i < subscribers.size(); ++i) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = i;
        ::epoll_ctl(ep, EPOLL_CTL_ADD, subscribers[i], &ev);
      }
      epoll_event pev{};
      pev.events = EPOLLIN;
      pev.data.u64 = ~std::uint64_t{0};
      ::epoll_ctl(ep, EPOLL_CTL_ADD, publisher, &pev);

      std::uint64_t received = 0, replies = 0, counted = 0;
      int in_flight = 0;
      std::string out, reply_tail;
      char buf[1 << 16];
      std::vector<epoll_event> events(static_cast<std::size_t>(shape.subscribers) + 1);
      const std::int64_t start = now_ns();
      const std::int64_t open_at = start + static_cast<std::int64_t>(shape.warmup_s * kNsPerSec);
      const std::int64_t close_at =
          open_at + static_cast<std::int64_t>(shape.duration_s * kNsPerSec);
      bool recording = false;
      std::uint64_t received0 = 0, replies0 = 0, counted0 = 0;
      double cli0 = 0, srv0 = 0;
      for (;;) {
        const std::int64_t now = now_ns();
        if (!recording && now >= open_at) {
          recording = true;
          received0 = received;
          replies0 = replies;
          counted0 = counted;
          cli0 = self_cpu_seconds();
          srv0 = process_tree_cpu_seconds(target.server_pid());
        }
        if (now >= close_at) break;
        if (in_flight < shape.depth) {
          out.clear();
          while (in_flight < shape.depth) {
            out += publish;
            ++in_flight;
          }
          if (!send_all(publisher, out, 5000))
            throw std::runtime_error("PUBLISH could not be sent");
        }
        const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 10);
        for (int e = 0; e < n; ++e) {
          const std::uint64_t who = events[static_cast<std::size_t>(e)].data.u64;
          const int fd = who == ~std::uint64_t{0} ? publisher : subscribers[who];
          for (;;) {
            const ssize_t got = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (got == 0) throw std::runtime_error("the server closed a connection");
            if (got < 0) break;
            if (fd == publisher) {
              reply_tail.append(buf, static_cast<std::size_t>(got));
              std::size_t at = 0, nl;
              while ((nl = reply_tail.find("\r\n", at)) != std::string::npos) {
                if (reply_tail[at] != ':')
                  throw std::runtime_error("PUBLISH answered " + reply_tail.substr(at, nl - at));
                counted += std::stoull(reply_tail.substr(at + 1, nl - at - 1));
                ++replies;
                --in_flight;
                at = nl + 2;
              }
              reply_tail.erase(0, at);
            } else {
              received += static_cast<std::uint64_t>(got);
            }
            if (static_cast<std::size_t>(got) < sizeof(buf)) break;
          }
        }
      }
      const double cli = self_cpu_seconds() - cli0;
      const double srv = process_tree_cpu_seconds(target.server_pid()) - srv0;
      ::close(ep);
      const std::uint64_t delivered = (received - received0) / frame.size();
      total.seconds += shape.duration_s;
      total.published += replies - replies0;
      total.counted += counted - counted0;
      total.delivered += delivered;
      total.client_cpu_s += cli;
      total.server_cpu_s += srv;
      total.window_rates.push_back(static_cast<double>(delivered) / shape.duration_s);
    } catch (const std::exception& e) {
      total.failed = true;
      total.failure = e.what();
    }
    close_all();
  });
  window.join();
}

}  // namespace holdfast::bench
