// What the socket-level fuzzers share (connection_fuzz for RESP, http_session_fuzz for HTTP):
// the policy over an embedded backend on a fake clock, over a store that makes changes durable
// only when told, the loop driver on an io_context that the harness polls, and three clients,
// each holding one end of a Unix socket pair whose other end a real server connection owns.
//
// The input is a list of steps, each one byte for the kind, one for the client and one or two
// for its arguments:
//   0 queue a canned request (the fuzzer's own list)
//   1 queue up to 255 raw bytes from the input
//   2 write up to n bytes of a client's queue to its socket (so requests split anywhere)
//   3 read up to n bytes of a client's replies
//   4 advance the clock (leases end, blocking acquires time out)
//   5 the store makes everything so far durable (replies held back for it may now leave)
//   6 the client hangs up; a new client takes its place
//   7 (deferred mode only) run one queued call, chosen by the argument
// After each step the loop runs until it has nothing left to do. finish() then writes what
// every client has queued and reads until nothing more comes, moving the clock on, syncing
// the store and running queued calls until a whole round changes nothing.
//
// In deferred mode the front ends see a service whose calls all take effect later (as on a
// PostgreSQL node): every call waits in a queue that the fuzzer runs one call at a time, in
// any order (deferred_service.h), so a call may finish after its client hung up, while its
// connection is congested, or after calls of other connections submitted later.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "deferred_service.h"
#include "server/loop_driver.h"
#include "service/embedded/embedded_backend.h"
#include "service/policy.h"
#include "store/store.h"

namespace holdfast::fuzz {

// A memory store whose changes become durable only when the fuzzer says so.
class HeldBackStore final : public Store {
 public:
  Result<DurableState> recover() override { return DurableState{}; }
  std::uint64_t append(const Change&) override { return ++appended_; }
  void submit() override {}
  std::uint64_t durable_sequence() const override { return durable_; }
  void set_on_durable(std::function<void(std::uint64_t)>) override {}
  void set_state_source(StateSource) override {}
  StoreStats stats() const override { return {}; }
  void close() override {}
  // True when something new became durable.
  bool sync() {
    const bool moved = durable_ != appended_;
    durable_ = appended_;
    return moved;
  }

 private:
  std::uint64_t appended_ = 0, durable_ = 0;
};

// The fuzz input, read front to back; past its end every byte is 0.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ == size_; }
  std::uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  std::string_view take(std::size_t n) {
    n = std::min(n, size_ - at_);
    std::string_view s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

struct Client {
  int fd = -1;
  std::string sent;      // every byte the socket accepted, in order
  std::string queued;    // bytes waiting to be written
  std::string received;  // every byte read
  bool eof = false;      // a read saw the server close the connection
  bool broken = false;   // a write found the connection closed
};

class SocketHarness {
 public:
  SocketHarness(const SocketHarness&) = delete;
  SocketHarness& operator=(const SocketHarness&) = delete;

  void step(Bytes& in) {
    const std::uint8_t kind = in.next() % (deferred_ ? 8 : 7);
    Client& c = clients_[in.next() % clients_.size()];
    switch (kind) {
      case 0: {
        const std::uint8_t which = in.next();
        c.queued += canned(which, in.next());
        break;
      }
      case 1:
        c.queued += in.take(in.next());
        break;
      case 2:
        write(c, (static_cast<std::size_t>(in.next()) + 1) * 8);
        break;
      case 3:
        read(c, (static_cast<std::size_t>(in.next()) + 1) * 16);
        break;
      case 4:
        tick(static_cast<Millis>(in.next()) * 8);
        break;
      case 5:
        sync();
        break;
      case 6:
        ::close(c.fd);
        c = Client{};
        connect(c);
        break;
      case 7:
        deferred_service_.run(in.next());
        break;
    }
    pump();
  }

  // One fuzz input: its steps, then finish() and check_all().
  template <class Harness>
  static void run(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    Harness harness;
    for (int steps = 0; !in.empty() && steps < 2000; ++steps) harness.step(in);
    harness.finish();
    harness.check_all();
  }

  // Writes what every client has queued and reads until nothing more comes, moving the clock
  // on, syncing the store and running queued calls until a whole round changes nothing.
  void finish() {
    for (int round = 0, idle = 0; idle < 2; ++round) {
      if (round > 100000) std::abort();  // the server stopped making progress
      bool progress = false;
      for (auto& c : clients_) progress |= write(c, c.queued.size());
      pump();
      progress |= run_queued_calls();
      for (auto& c : clients_) progress |= read(c, SIZE_MAX);
      if (progress) {
        idle = 0;
        continue;
      }
      const bool synced = sync();
      tick(25LL * 3600 * 1000);  // past any lease and any (capped) timeout
      idle = synced ? 0 : idle + 1;
    }
  }

 protected:
  // deferred: the front ends see a service whose every call takes effect later (the derived
  // class hands them front_service()).
  explicit SocketHarness(bool deferred)
      : loop_(io_, clock_),
        backend_(clock_, store_, loop_.waker()),
        policy_(backend_, clock_),
        deferred_service_(policy_),
        deferred_(deferred) {
    if (!backend_.recover().ok()) std::abort();
    loop_.set_service(front_service());
  }

  LockService& front_service() {
    return deferred_ ? static_cast<LockService&>(deferred_service_) : policy_;
  }
  virtual ~SocketHarness() = default;  // the derived class hangs up first (hang_up_all)

  // Hands the server's end of a new socket pair to a server connection object.
  virtual void attach(int server_fd) = 0;
  virtual std::string canned(std::uint8_t which, std::uint8_t arg) = 0;
  // Aborts unless the client got what it was owed for what it sent.
  virtual void check(const Client& c) = 0;
  // The server side's registry of live connections (hub.live) is empty.
  virtual bool none_live() const = 0;

  // Every client's replies are checked; then every client hangs up, and no connection object
  // (registered or still referenced) and no waiter may outlive that.
  void check_all() {
    for (auto& c : clients_) check(c);
    hang_up_all();
    if (!none_live()) std::abort();
    for (const auto& weak : connections_)
      if (!weak.expired()) std::abort();  // a connection outlived its socket
    if (backend_.table().waiter_count() != 0) std::abort();
    if (!deferred_service_.empty()) std::abort();  // a call queued after everything had ended
  }

  // attach() registers each connection object it makes, so that check_all() sees it go.
  void track(const std::shared_ptr<void>& connection) { connections_.push_back(connection); }

  // The handle in the last reply of the last client that was given one (handles are random;
  // a release needs a real one), or "none". It is the 26 characters after `marker`, or after
  // the first `then` that follows the marker.
  std::string last_handle(std::string_view marker, std::string_view then = {}) const {
    std::string found = "none";
    for (const auto& c : clients_) {
      std::size_t at = c.received.rfind(marker);
      if (at == std::string::npos) continue;
      at += marker.size();
      if (!then.empty()) {
        at = c.received.find(then, at);
        if (at == std::string::npos) continue;
        at += then.size();
      }
      if (at + 26 <= c.received.size()) found = c.received.substr(at, 26);
    }
    return found;
  }

  // Called by the derived constructor once what attach() needs exists.
  void connect_all() {
    for (auto& c : clients_) connect(c);
  }

  // Every client hangs up; the loop runs, queued calls run (a connection gone meanwhile must
  // take their answers in its stride), and the store syncs once more, so that a connection that
  // closed while its reply waited for the store lets go of it.
  void hang_up_all() {
    for (auto& c : clients_) {
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
    }
    pump();
    run_queued_calls();
    sync();
  }

  // Runs queued calls, oldest first, until none is left; true when one ran.
  bool run_queued_calls() {
    bool ran = false;
    while (deferred_service_.run(0)) {
      ran = true;
      pump();
    }
    return ran;
  }

  void pump() {
    for (int i = 0; i < 1000000; ++i) {
      io_.restart();  // a loop that ran out of work stops, and a stopped loop polls nothing
      if (io_.poll() == 0) return;
    }
    std::abort();  // handlers kept scheduling each other
  }

  boost::asio::io_context io_;
  FakeClock clock_;
  HeldBackStore store_;
  LoopDriver loop_;
  EmbeddedBackend backend_;
  Policy policy_;
  DeferredService deferred_service_;
  std::array<Client, 3> clients_;
  SessionId last_session_ = 0;

 private:
  const bool deferred_;
  std::vector<std::weak_ptr<void>> connections_;

  void connect(Client& c) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
      std::abort();
    // Small socket buffers: the server's writes come back partial and go asynchronous.
    const int small = 4096;
    ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    ::setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    c.fd = fds[0];
    attach(fds[1]);
    pump();
  }

  bool write(Client& c, std::size_t n) {
    n = std::min(n, c.queued.size());
    if (n == 0 || c.broken) return false;
    const ssize_t w = ::send(c.fd, c.queued.data(), n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) c.broken = true;
      return false;
    }
    c.sent.append(c.queued, 0, static_cast<std::size_t>(w));
    c.queued.erase(0, static_cast<std::size_t>(w));
    return w > 0;
  }

  bool read(Client& c, std::size_t n) {
    bool got = false;
    char buf[4096];
    while (n > 0 && !c.eof) {
      const ssize_t r = ::recv(c.fd, buf, std::min(n, sizeof buf), MSG_DONTWAIT);
      if (r == 0) c.eof = true;
      if (r <= 0) break;
      c.received.append(buf, static_cast<std::size_t>(r));
      n -= static_cast<std::size_t>(r);
      got = true;
      pump();  // the server may have more to write now that there is room
    }
    return got;
  }

  void tick(Millis ms) {
    clock_.advance(ms);
    front_service().advance();
    loop_.after_event();
    pump();
  }

  bool sync() {
    const bool moved = store_.sync();
    loop_.wake();  // what the log writer does after a sync
    pump();
    return moved;
  }
};

}  // namespace holdfast::fuzz
