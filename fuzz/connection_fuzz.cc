// Fuzzes the RESP connection itself: real resp::Connection objects on an io_context, each
// talking to the fuzzer over a Unix socket pair, in front of an EmbeddedService on a fake clock.
// commands_fuzz checks the commands; this one checks what happens around them: bytes that
// arrive in arbitrary pieces, pipelines behind a blocking acquire, replies that wait for the
// store to make them durable, a client that reads slowly (the output limit is set to 512 bytes
// here, so congestion is common), clients that hang up at any moment.
//
// The input is a list of steps, each one byte for the kind and one or two for its arguments:
//   0 queue a canned command (PING with a fresh payload, lock commands on 4 keys, HELLO, QUIT)
//   1 queue up to 255 raw bytes from the input
//   2 write up to n bytes of a client's queue to its socket (so commands split anywhere)
//   3 read up to n bytes of a client's replies
//   4 advance the clock (leases end, blocking acquires time out)
//   5 the store makes everything so far durable (replies held back for it may now leave)
//   6 the client hangs up; a new client takes its place
// After each step the loop runs until it has nothing left to do.
//
// At the end every client still connected writes what it has queued and reads until nothing
// more comes, with the clock moved on and the store synced until no reply is outstanding. Then:
//   - every client got exactly one well-formed reply per command it sent, up to a QUIT or a
//     protocol error (which answer and close), and nothing after;
//   - every PING <payload> got its own payload back, in order (a lost, repeated or misplaced
//     command shows here);
//   - once all clients hang up, no connection object is left alive and no waiter is queued.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/validation.h"
#include "server/embedded_service.h"
#include "server/loop_driver.h"
#include "server/resp/connection.h"
#include "store/store.h"

namespace {

using namespace holdfast;
using namespace holdfast::resp;

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

std::string multibulk(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

// The replies at the front of `data`: one complete top-level RESP reply, or nullopt when the
// data ends inside one. *bad is set when the bytes are not RESP the server could have written.
std::optional<std::size_t> reply_length(std::string_view data, std::size_t at, bool* bad) {
  if (at >= data.size()) return std::nullopt;
  const std::size_t eol = data.find("\r\n", at);
  if (eol == std::string_view::npos) return std::nullopt;
  const char type = data[at];
  const std::string_view line = data.substr(at + 1, eol - at - 1);
  std::size_t end = eol + 2;
  switch (type) {
    case '+':
    case '-':
    case '_':
      return end;
    case ':':
      if (!parse_int64(line)) *bad = true;
      return end;
    case '$': {
      const auto n = parse_int64(line);
      if (!n || *n < -1) {
        *bad = true;
        return end;
      }
      if (*n == -1) return end;
      if (end + static_cast<std::size_t>(*n) + 2 > data.size()) return std::nullopt;
      if (data.substr(end + static_cast<std::size_t>(*n), 2) != "\r\n") *bad = true;
      return end + static_cast<std::size_t>(*n) + 2;
    }
    case '*':
    case '%': {
      const auto n = parse_int64(line);
      if (!n || *n < -1) {
        *bad = true;
        return end;
      }
      const std::int64_t items = type == '%' ? 2 * *n : *n;
      for (std::int64_t i = 0; i < items; ++i) {
        auto next = reply_length(data, end, bad);
        if (!next || *bad) return next;
        end = *next;
      }
      return end;
    }
    default:
      *bad = true;
      return end;
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

// What the server owes a client for the bytes it sent: one reply per command, and for a
// PING with a payload that payload. A QUIT or a protocol error is the last command answered.
struct Expected {
  std::vector<std::optional<std::string>> replies;  // the PING payload, or any reply
  bool may_end_with_protocol_error = false;          // an unfinished frame may be refused
};

Expected expected_replies(std::string_view sent, const ParserLimits& limits) {
  Expected e;
  RequestParser parser(limits);
  while (!sent.empty()) {
    std::size_t consumed = 0;
    const ParseStatus st = parser.parse(sent, &consumed);
    if (st == ParseStatus::kIncomplete) {
      e.may_end_with_protocol_error = true;
      break;
    }
    if (st == ParseStatus::kError) {
      e.replies.emplace_back(std::nullopt);
      break;
    }
    sent.remove_prefix(consumed);
    const auto& args = parser.args();
    if (args.empty()) continue;
    if (iequals(args[0], "PING") && args.size() == 2) {
      e.replies.emplace_back(std::string(args[1]));
    } else {
      e.replies.emplace_back(std::nullopt);
    }
    if (iequals(args[0], "QUIT") && args.size() == 1) break;  // with arguments it is a usage error
  }
  return e;
}

struct Client {
  int fd = -1;
  std::string sent;      // every byte the socket accepted, in order
  std::string queued;    // bytes waiting to be written
  std::string received;  // every byte read
  bool eof = false;     // a read saw the server close the connection
  bool broken = false;  // a write found the connection closed
};

class Harness {
 public:
  Harness() : service_(clock_, store_), loop_(io_, &service_) {
    if (!service_.recover().ok()) std::abort();
    hub_ = std::make_unique<ConnectionHub>(ConnectionHub{
        io_, service_, loop_, ServerInfo{"fuzz", false}, nullptr, nullptr, nullptr, limits(), {}, 0,
        512});
    for (auto& c : clients_) connect(c);
  }

  ~Harness() {
    for (auto& c : clients_)
      if (c.fd >= 0) ::close(c.fd);
    pump();
  }

  void step(Bytes& in) {
    const std::uint8_t kind = in.next() % 7;
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
    }
    pump();
  }

  void finish_and_check() {
    // Write everything, read everything, and let time and the store move on, until a whole
    // round changes nothing.
    for (int round = 0, idle = 0; idle < 2; ++round) {
      if (round > 100000) std::abort();  // the server stopped making progress
      bool progress = false;
      for (auto& c : clients_) progress |= write(c, c.queued.size());
      pump();
      for (auto& c : clients_) progress |= read(c, SIZE_MAX);
      if (progress) {
        idle = 0;
        continue;
      }
      const bool synced = sync();
      tick(25LL * 3600 * 1000);  // past any lease and any (capped) timeout
      idle = synced ? 0 : idle + 1;
    }
    for (auto& c : clients_) check(c);
    for (auto& c : clients_) {
      ::close(c.fd);
      c.fd = -1;
    }
    pump();
    sync();  // a connection that closed while its reply waited for the store lets go of it
    if (!hub_->live.empty()) std::abort();
    for (const auto& weak : connections_)
      if (!weak.expired()) std::abort();  // a connection outlived its socket
    if (service_.table().waiter_count() != 0) std::abort();
  }

 private:
  static ParserLimits limits() {
    ParserLimits l;
    l.max_frame_bytes = 4096;
    l.max_args = 64;
    l.max_inline_bytes = 1024;
    return l;
  }

  void connect(Client& c) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
    // Small socket buffers: the server's writes come back partial and go asynchronous.
    const int small = 4096;
    ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    ::setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    c.fd = fds[0];
    Connection::Socket socket(io_, boost::asio::generic::stream_protocol(AF_UNIX, 0), fds[1]);
    auto conn = std::make_shared<Connection>(*hub_, std::move(socket));
    conn->start();
    connections_.push_back(conn);
    pump();
  }

  std::string canned(std::uint8_t which, std::uint8_t arg) {
    const std::string key = std::string("k") + static_cast<char>('0' + arg % 4);
    const std::string ttl = std::to_string(50 + (arg >> 2) * 20);
    switch (which % 20) {
      case 0:
        return multibulk({"PING", "p" + std::to_string(++pings_)});
      case 1:
        return multibulk({"PING", std::string(arg * 4, 'x') + std::to_string(++pings_)});
      case 2:
        return "PING p" + std::to_string(++pings_) + "\r\n";  // inline
      case 3:
        return multibulk({"LOCK.TRY", key, "TTL", ttl});
      case 4:
        return multibulk({"LOCK.TRY", key, "TTL", ttl, "SESSION"});
      case 5:
        return multibulk({"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", std::to_string(arg * 8)});
      case 6:
        return multibulk({"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", "1000", "OWNER", "o"});
      case 7:
        return multibulk({"LOCK.RELEASE", key, last_handle()});
      case 8:
        return multibulk({"LOCK.RENEW", key, last_handle(), "TTL", ttl});
      case 9:
        return multibulk({"LOCK.STATUS", key});
      case 10:
        return multibulk({"LOCK.LIST", "COUNT", std::to_string(1 + arg % 3)});
      case 11:
        return multibulk({"LOCK.ASSIGN", key, "u" + std::to_string(arg % 2)});
      case 12:
        return multibulk({"LOCK.ASSIGN", key, "u" + std::to_string(arg % 2), "TTL", ttl, "TIMEOUT",
                          std::to_string(arg * 4)});
      case 13:
        return multibulk({"LOCK.UNASSIGN", key});
      case 14:
        return multibulk({"LOCK.HOLDER", key});
      case 15:
        return multibulk({"HELLO", arg % 2 ? "3" : "2"});
      case 16:
        return multibulk({"QUIT"});
      case 17:
        return "\r\n";  // an empty inline line: no command, no reply
      case 18:
        return multibulk({"NO.SUCH.COMMAND", key});
      default:
        return multibulk({"LOCK.TRANSFER", key, "u1", "FROM", "u0"});
    }
  }

  // The newest handle any client was given (handles are random; a release needs a real one).
  std::string last_handle() const {
    static constexpr std::string_view kMarker = "handle\r\n$";
    std::string best = "none";
    for (const auto& c : clients_) {
      const std::size_t at = c.received.rfind(kMarker);
      if (at == std::string::npos) continue;
      const std::size_t eol = c.received.find("\r\n", at + kMarker.size());
      if (eol == std::string::npos) continue;
      best = c.received.substr(eol + 2, 26);
    }
    return best;
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
    service_.advance();
    loop_.after_event();
    pump();
  }

  bool sync() {
    const bool moved = store_.sync();
    loop_.store_advanced();
    pump();
    return moved;
  }

  void pump() {
    for (int i = 0; i < 1000000; ++i) {
      io_.restart();  // a loop that ran out of work stops, and a stopped loop polls nothing
      if (io_.poll() == 0) return;
    }
    std::abort();  // handlers kept scheduling each other
  }

  void check(const Client& c) {
    const Expected e = expected_replies(c.sent, limits());
    if (echo_)
      std::fprintf(stderr, "client sent:\n%s\nowed %zu replies, got:\n%s\n", c.sent.c_str(),
                   e.replies.size(), c.received.c_str());
    std::string_view got = c.received;
    std::size_t at = 0;
    for (std::size_t i = 0; i < e.replies.size(); ++i) {
      bool bad = false;
      const auto end = reply_length(got, at, &bad);
      if (bad) std::abort();             // not RESP
      if (!end) {
        if (echo_) std::fprintf(stderr, "reply %zu of %zu missing\n", i, e.replies.size());
        std::abort();  // a command was never answered
      }
      const std::string_view reply = got.substr(at, *end - at);
      if (const auto& payload = e.replies[i]) {
        const std::string want = "$" + std::to_string(payload->size()) + "\r\n" + *payload + "\r\n";
        if (reply != want) std::abort();  // a PING answered out of place or garbled
      }
      at = *end;
    }
    if (at < got.size()) {
      // Only an unfinished last frame may draw one more reply: its protocol error.
      bool bad = false;
      const auto end = reply_length(got, at, &bad);
      if (!e.may_end_with_protocol_error || bad || !end || *end != got.size() ||
          got.substr(at).rfind("-ERR Protocol error", 0) != 0)
        std::abort();  // replies to nothing
    }
  }

  const bool echo_ = std::getenv("HOLDFAST_FUZZ_ECHO") != nullptr;
  boost::asio::io_context io_;
  FakeClock clock_;
  HeldBackStore store_;
  EmbeddedService service_;
  LoopDriver loop_;
  std::unique_ptr<ConnectionHub> hub_;
  std::array<Client, 3> clients_;
  std::vector<std::weak_ptr<Connection>> connections_;
  std::uint64_t pings_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  Harness harness;
  for (int steps = 0; !in.empty() && steps < 2000; ++steps) harness.step(in);
  harness.finish_and_check();
  return 0;
}
