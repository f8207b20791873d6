#include "service/postgres/listener.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace holdfast::pg {

Listener::Listener(Primary& primary, std::vector<std::string> channels, NotifyFn on_notify,
                   std::function<void()> on_resync)
    : primary_(primary),
      channels_(std::move(channels)),
      on_notify_(std::move(on_notify)),
      on_resync_(std::move(on_resync)) {}

Listener::~Listener() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status Listener::connect_and_listen() {
  auto conn = primary_.connect();
  if (!conn.ok()) return std::move(conn).error();
  for (const std::string& channel : channels_) {
    if (auto r = (*conn)->exec("LISTEN " + channel); !r.ok()) return std::move(r).error();
  }
  conn_ = std::move(*conn);
  return ok_status();
}

Status Listener::start() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Error(ErrorCode::kInternal, "eventfd failed");
  if (auto st = connect_and_listen(); !st.ok()) return st;
  thread_ = std::thread([this] { run(); });
  return ok_status();
}

void Listener::stop() {
  if (stopping_.exchange(true)) return;
  poke();
  if (thread_.joinable()) thread_.join();
}

void Listener::take_pokes() {
  std::uint64_t pokes = 0;
  (void)!::read(wake_fd_, &pokes, sizeof(pokes));  // non-blocking: nothing to take is fine
}

void Listener::poke() {
  if (wake_fd_ < 0) return;
  std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

bool Listener::drain() {
  PGconn* raw = conn_->raw();
  if (PQconsumeInput(raw) == 0) return false;
  while (PGnotify* n = PQnotifies(raw)) {
    std::string channel = n->relname, payload = n->extra;
    const int sender = n->be_pid;
    PQfreemem(n);
    on_notify_(channel, payload, sender);
  }
  return PQstatus(raw) == CONNECTION_OK;
}

void Listener::run() {
  int backoff_ms = 50;
  while (!stopping_) {
    if (!conn_) {
      pollfd wake{wake_fd_, POLLIN, 0};
      ::poll(&wake, 1, backoff_ms);
      if (stopping_) return;
      take_pokes();  // a poke must not end the next waits early: this reconnects anyway
      if (auto st = connect_and_listen(); !st.ok()) {
        spdlog::warn("LISTEN connection: {}; retrying", st.error().message);
        backoff_ms = std::min(backoff_ms * 2, 250);
        continue;
      }
      spdlog::info("LISTEN connection re-established");
      backoff_ms = 50;
      on_resync_();
      continue;
    }
    if (conn_->epoch != primary_.epoch()) {
      // Another server is the primary now (or this one was found gone): listen there.
      conn_.reset();
      continue;
    }
    pollfd fds[2] = {{PQsocket(conn_->raw()), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    // Blocks until a notification, an error, stop() or poke(), or a second: a change of
    // primary that nobody poked about (one connection found the server gone) is seen within
    // it, and an idle node wakes no more often. Waiters do not depend on it meanwhile: they
    // ask again every 250 ms in case a notification was lost.
    const int n = ::poll(fds, 2, 1000);
    if (stopping_) return;
    if (n < 0) continue;  // EINTR
    if ((fds[1].revents & POLLIN) != 0) take_pokes();
    if (n == 0 || (fds[0].revents & (POLLIN | POLLERR | POLLHUP)) == 0)
      continue;  // quiet, or poked: the epoch is looked at above; TCP keepalives surface a
                 // silently dead connection
    if (!drain()) {
      spdlog::warn("LISTEN connection lost: {}", PQerrorMessage(conn_->raw()));
      primary_.lost(conn_->epoch, "the LISTEN connection broke");
      conn_.reset();  // reconnect above, then resync: notifications sent meanwhile are lost
    }
  }
}

}  // namespace holdfast::pg
