// Fuzzes the RESP connection itself: real resp::Connection objects on an io_context, each
// talking to the fuzzer over a Unix socket pair, in front of the policy over an embedded
// backend on a fake clock.
// commands_fuzz checks the commands; this one checks what happens around them: bytes that
// arrive in arbitrary pieces, pipelines behind a blocking acquire, replies that wait for the
// store to make them durable, a client that reads slowly, clients that hang up at any moment.
// The output limit (512 bytes) and the input buffer (4 KiB + 256 bytes) are set small here, so
// that congestion and a full input buffer behind a waiting acquire are common.
//
// The steps of the input are those of socket_harness.h; the canned requests here are PING with
// a fresh payload, lock commands on 4 keys, HELLO, QUIT and an unknown command.
//
// When the harness has finished (every client has written everything and read until nothing
// more came, with the clock moved on and the store synced until nothing was outstanding):
//   - every client got exactly one well-formed reply per command it sent, up to a QUIT or a
//     protocol error (which answer and close), and nothing after;
//   - every PING <payload> got its own payload back, in order (a lost, repeated or misplaced
//     command shows here);
//   - once all clients hang up, no connection object is left alive and no waiter is queued.
// connection_offload_fuzz is the same with a service whose calls all take effect later, in any
// order (see socket_harness.h).
#include <sys/socket.h>

#include <boost/asio/generic/stream_protocol.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/validation.h"
#include "resp_replies.h"
#include "server/resp/connection.h"
#include "socket_harness.h"

namespace {

using namespace holdfast;
using namespace holdfast::resp;
using fuzz::Client;

std::string multibulk(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
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
  bool may_end_with_protocol_error = false;         // an unfinished frame may be refused
};

// Small limits, so that slow readers congest a connection, and commands pipelined behind a
// waiting acquire fill its input buffer, often.
constexpr std::size_t kMaxPendingOutput = 512;
constexpr std::size_t kInputSlack = 256;

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
    if (consumed > limits.max_frame_bytes + kInputSlack) {
      e.replies.emplace_back(std::nullopt);  // it cannot fit in the input buffer: refused
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

// connection_offload_fuzz builds this file with HOLDFAST_FUZZ_OFFLOAD: every call takes effect
// later, when the fuzzer says, as on a PostgreSQL node.
#ifdef HOLDFAST_FUZZ_OFFLOAD
constexpr bool kOffload = true;
#else
constexpr bool kOffload = false;
#endif

class Harness final : public fuzz::SocketHarness {
 public:
  Harness() : SocketHarness(kOffload) {
    hub_ = std::make_unique<ConnectionHub>(
        ConnectionHub{io_,
                      loop_,
                      Pipeline::Env{front_service(), info_, nullptr, nullptr},
                      limits(),
                      {},
                      &last_session_,
                      kMaxPendingOutput,
                      kInputSlack});
    connect_all();
  }

  ~Harness() override { hang_up_all(); }

 private:
  static ParserLimits limits() {
    ParserLimits l;
    l.max_frame_bytes = 4096;
    l.max_args = 64;
    l.max_inline_bytes = 1024;
    return l;
  }

  void attach(int server_fd) override {
    Connection::Socket socket(io_, boost::asio::generic::stream_protocol(AF_UNIX, 0), server_fd);
    auto conn = std::make_shared<Connection>(*hub_, std::move(socket));
    conn->start();
    track(conn);
  }

  std::string canned(std::uint8_t which, std::uint8_t arg) override {
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
        return multibulk({"LOCK.RELEASE", key, handle()});
      case 8:
        return multibulk({"LOCK.RENEW", key, handle(), "TTL", ttl});
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

  bool none_live() const override { return hub_->live.empty(); }

  std::string handle() const {
    return last_handle("handle\r\n$", "\r\n");
  }  // "26\r\n" and the handle

  void check(const Client& c) override {
    const Expected e = expected_replies(c.sent, limits());
    if (echo_)
      std::fprintf(stderr, "client sent:\n%s\nowed %zu replies, got:\n%s\n", c.sent.c_str(),
                   e.replies.size(), c.received.c_str());
    std::string_view got = c.received;
    std::size_t at = 0;
    for (std::size_t i = 0; i < e.replies.size(); ++i) {
      bool bad = false;
      const auto end = fuzz::reply_length(got, at, &bad);
      if (bad) std::abort();  // not RESP
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
      const auto end = fuzz::reply_length(got, at, &bad);
      if (!e.may_end_with_protocol_error || bad || !end || *end != got.size() ||
          got.substr(at).rfind("-ERR Protocol error", 0) != 0)
        std::abort();  // replies to nothing
    }
  }

  const bool echo_ = std::getenv("HOLDFAST_FUZZ_ECHO") != nullptr;
  const ServerInfo info_{"fuzz", false};
  std::unique_ptr<ConnectionHub> hub_;
  std::uint64_t pings_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::SocketHarness::run<Harness>(data, size);
  return 0;
}
