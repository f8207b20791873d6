// etcd target and its HTTP/JSON LockClient: see etcd_target.h.
#include "etcd_target.h"

#include <boost/json.hpp>

#include <charconv>
#include <deque>
#include <stdexcept>
#include <thread>

#include "../clock.h"
#include "../http_client.h"
#include "../net.h"
#include "../process.h"

namespace holdfast::bench {

namespace {

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string key_b64(std::uint64_t lock) { return base64("bench/" + std::to_string(lock)); }

class EtcdLockClient final : public LockClient, private HttpConnection::Listener {
 public:
  EtcdLockClient(EventLoop& loop, int fd, std::uint16_t port) : http_(loop, fd, port, this) {}

  void try_acquire(std::uint64_t lock, std::uint32_t ttl_ms, std::uint64_t tag) override {
    push({OpKind::kTryAcquire, Phase::kStart, lock, ttl_ms, tag, {}});
  }
  void release(std::uint64_t lock, std::string_view handle, std::uint64_t tag) override {
    push({OpKind::kRelease, Phase::kStart, lock, 0, tag, std::string(handle)});
  }
  std::size_t in_flight() const override { return ops_.size(); }
  bool healthy() const override { return http_.healthy(); }

 private:
  enum class Phase : std::uint8_t { kStart, kGrant, kTxn, kRevoke };
  struct Op {
    OpKind kind;
    Phase phase;
    std::uint64_t lock;
    std::uint32_t ttl_ms;
    std::uint64_t tag;
    std::string lease;  // release: the lease to revoke
  };

  void push(Op op) {
    if (!http_.healthy()) {
      deliver({op.kind, OpStatus::kError, op.tag, {}, "connection closed"});
      return;
    }
    ops_.push_back(std::move(op));
    // Operations run one at a time: an acquire is two requests and the second depends on the
    // first's answer.
    if (!running_) {
      running_ = true;
      advance();
    }
  }

  // Sends the next request of the operation at the front.
  void advance() {
    Op& op = ops_.front();
    if (op.kind == OpKind::kRelease) {
      op.phase = Phase::kRevoke;
      http_.post("/v3/lease/revoke", "{\"ID\":\"" + op.lease + "\"}");
      return;
    }
    if (op.phase == Phase::kStart) {
      const std::int64_t ttl_s = (op.ttl_ms + 999) / 1000;
      if (!spare_lease_.empty() && now_ns() - spare_granted_at_ < ttl_s * kNsPerSec / 2) {
        op.phase = Phase::kTxn;
      } else {
        op.phase = Phase::kGrant;
        http_.post("/v3/lease/grant", "{\"TTL\":" + std::to_string(ttl_s) + "}");
        return;
      }
    }
    const std::string key = key_b64(op.lock);
    http_.post("/v3/kv/txn",
               "{\"compare\":[{\"key\":\"" + key +
                   "\",\"result\":\"EQUAL\",\"target\":\"CREATE\",\"create_revision\":\"0\"}],"
                   "\"success\":[{\"request_put\":{\"key\":\"" +
                   key + "\",\"value\":\"MQ==\",\"lease\":\"" + spare_lease_ + "\"}}]}");
  }

  void finish(OpStatus status, std::string_view handle, std::string_view detail) {
    Op op = std::move(ops_.front());
    ops_.pop_front();
    running_ = false;
    // The listener may queue the next operation from inside deliver(), which starts it.
    deliver({op.kind, status, op.tag, handle, detail});
    if (!running_ && !ops_.empty() && http_.healthy()) {
      running_ = true;
      advance();
    }
  }

  void on_response(int status, std::string_view body) override {
    if (ops_.empty()) return;
    Op& op = ops_.front();
    boost::system::error_code ec;
    const boost::json::value doc = boost::json::parse(body, ec);
    const boost::json::object* obj = ec ? nullptr : doc.if_object();
    if (op.phase == Phase::kRevoke) {
      // A lease that already expired answers 404/"requested lease not found": not ours now.
      if (status == 200)
        finish(OpStatus::kReleased, {}, {});
      else if (body.find("lease not found") != std::string_view::npos)
        finish(OpStatus::kNotHeld, {}, {});
      else
        finish(OpStatus::kError, {}, body);
      return;
    }
    if (status != 200 || obj == nullptr) {
      finish(OpStatus::kError, {}, body);
      return;
    }
    if (op.phase == Phase::kGrant) {
      const boost::json::value* id = obj->if_contains("ID");
      if (id == nullptr || !id->is_string()) {
        finish(OpStatus::kError, {}, body);
        return;
      }
      spare_lease_ = std::string(id->as_string());
      spare_granted_at_ = now_ns();
      op.phase = Phase::kTxn;
      advance();
      return;
    }
    // kTxn: proto3 JSON leaves out `succeeded` when it is false.
    const boost::json::value* ok = obj->if_contains("succeeded");
    if (ok != nullptr && ok->is_bool() && ok->as_bool()) {
      granted_lease_ = std::move(spare_lease_);
      spare_lease_.clear();
      finish(OpStatus::kGranted, granted_lease_, {});
    } else {
      finish(OpStatus::kBusy, {}, {});
    }
  }

  void on_failure(std::string_view why) override {
    const std::string reason(why);
    running_ = false;
    while (!ops_.empty()) {
      Op op = std::move(ops_.front());
      ops_.pop_front();
      deliver({op.kind, OpStatus::kError, op.tag, {}, reason});
    }
  }

  HttpConnection http_;
  std::deque<Op> ops_;
  bool running_ = false;  // the front operation has a request on the wire
  std::string spare_lease_;
  std::int64_t spare_granted_at_ = 0;
  std::string granted_lease_;
};

class EtcdTarget final : public Target {
 public:
  ~EtcdTarget() override { stop(); }

  std::string name() const override { return "etcd"; }
  std::string description() const override {
    return command_first_line({"etcd", "--version"}) +
           "; JSON gateway, lease grant + txn(create_revision == 0) / lease revoke";
  }

  void start(const std::filesystem::path& dir) override {
    client_port_ = free_loopback_port();
    const std::uint16_t peer_port = free_loopback_port();
    const std::string client_url = "http://127.0.0.1:" + std::to_string(client_port_);
    const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port);
    log_ = dir / "etcd.log";
    process_ = ChildProcess::spawn({"etcd",
                                    "--name",
                                    "bench",
                                    "--data-dir",
                                    (dir / "etcd").string(),
                                    "--listen-client-urls",
                                    client_url,
                                    "--advertise-client-urls",
                                    client_url,
                                    "--listen-peer-urls",
                                    peer_url,
                                    "--initial-advertise-peer-urls",
                                    peer_url,
                                    "--initial-cluster",
                                    "bench=" + peer_url,
                                    "--initial-cluster-state",
                                    "new",
                                    "--log-level",
                                    "warn",
                                    "--logger",
                                    "zap"},
                                   log_);
    if (!wait_ready(15000)) {
      process_.stop();
      throw std::runtime_error("etcd did not become ready: " + log_tail(log_));
    }
  }

  void stop() override { process_.stop(); }
  pid_t server_pid() const override { return process_.pid(); }

  std::unique_ptr<LockClient> connect(EventLoop& loop) override {
    const int fd = connect_loopback(client_port_, 5000);
    if (fd < 0) throw std::runtime_error("cannot connect to etcd");
    return std::make_unique<EtcdLockClient>(loop, fd, client_port_);
  }

 private:
  // Ready = a write through the gateway succeeds (the member has elected itself leader).
  bool wait_ready(int timeout_ms) {
    const std::int64_t deadline = now_ns() + std::int64_t{timeout_ms} * kNsPerMs;
    const std::string body = "{\"key\":\"" + base64("bench/ready") + "\",\"value\":\"MQ==\"}";
    const std::string request =
        "POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nConnection: close\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    while (now_ns() < deadline && !interrupted() && process_.running()) {
      const int fd = connect_loopback(client_port_, 200);
      if (fd >= 0) {
        std::string reply;
        if (send_all(fd, request, 1000)) {
          while (recv_some(fd, reply, 2000)) {
          }
        }
        close(fd);
        if (reply.starts_with("HTTP/1.1 200") && reply.find("\"header\"") != std::string::npos) {
          return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::uint16_t client_port_ = 0;
  std::filesystem::path log_;
  ChildProcess process_;
};

}  // namespace

std::unique_ptr<Target> make_etcd_target() { return std::make_unique<EtcdTarget>(); }

}  // namespace holdfast::bench
