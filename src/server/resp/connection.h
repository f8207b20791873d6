// One RESP client connection.
//
// Lifecycle:
//  1. read(): bytes land in a bounded input buffer (never more than one maximal frame plus
//     slack; when it is full, reading pauses).
//  2. process(): every complete command in the buffer runs in order; replies are appended to
//     one output buffer. A blocking acquire that queues stops processing (later pipelined
//     commands wait, as Redis does) until on_waiter_outcome() writes its reply. Processing also
//     pauses while too much output is waiting for a slow reader.
//  3. flush(): once the store has made durable everything the replies depend on, the whole
//     output buffer leaves in one write: one syscall per batch of pipelined replies.
//     With a service whose calls block (the PostgreSQL node), each command runs on the
//     offload executor instead, one at a time per connection, and its reply is posted back.
//  4. close(): on EOF, an error, QUIT or a protocol error. Its waiter leaves the queue and its
//     session-scoped holds are released at once.
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <unordered_map>

#include "server/blocking_executor.h"
#include "server/lock_service.h"
#include "server/loop_driver.h"
#include "server/metrics.h"
#include "server/resp/codec.h"
#include "server/resp/commands.h"

namespace holdfast::resp {

class Connection;
struct ConnectionHub;

// Fills CLIENT LIST's addr, laddr and fd of a new connection from its socket (Unix socket
// peers have no path of their own: both show the listener's path, with port 0 as in Redis).
void describe_endpoints(boost::asio::generic::stream_protocol::socket& socket,
                        ConnectionState& state);

// The hub's open connections as commands see them (CLIENT LIST, CLIENT KILL, INFO). One per
// connection, so nothing points into a hub that may be moved before it serves.
class LiveClients final : public ClientDirectory {
 public:
  explicit LiveClients(ConnectionHub& hub) : hub_(hub) {}
  void for_each(const std::function<void(const ConnectionState&)>& fn) const override;
  std::size_t count() const override;
  std::uint64_t accepted() const override;
  bool kill(SessionId id) override;

 private:
  ConnectionHub& hub_;
};

// What every connection shares: the loop, the service and the registry of live connections.
struct ConnectionHub {
  boost::asio::io_context& io;
  LockService& service;
  LoopDriver& loop;
  ServerInfo info;
  const Authenticator* auth = nullptr;
  Metrics* metrics = nullptr;
  BlockingExecutor* offload = nullptr;  // set when the service's calls block: run them there
  ParserLimits limits;
  std::unordered_map<SessionId, std::weak_ptr<Connection>> live;
  SessionId last_id = 0;
  // The fuzzer lowers these two to reach their edges often.
  // Past this much output waiting for a slow reader, a connection stops running its commands
  // until the reader catches up.
  std::size_t max_pending_output = 4 * 1024 * 1024;
  // The input buffer holds at most one maximal command (limits.max_frame_bytes) and this much
  // more; when it is full of commands that cannot run yet, reading pauses.
  std::size_t input_slack = 64 * 1024;
};

class Connection final : public std::enable_shared_from_this<Connection>, public WaiterClient {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  Connection(ConnectionHub& hub, Socket socket);
  ~Connection() override;

  void start();
  // The server is stopping: a blocked acquire answers UNAVAILABLE, pending replies are sent,
  // then the connection closes. Further input is not processed.
  void shutdown();
  void on_waiter_outcome(const WaiterOutcome& outcome) override;
  SessionId id() const { return state_.id; }
  // What CLIENT LIST shows of this connection. Read on the event loop only.
  const ConnectionState& state() const { return state_; }
  // Copies the buffer figures into state() (CLIENT LIST's qbuf, qbuf-free, omem).
  void note_buffers();
  // CLIENT KILL from another connection: closes this one from the loop, after the current
  // step (the caller may be in the middle of its own processing).
  void kill();

 private:
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void process();
  // Runs one command on the offload executor; the reply comes back through the loop.
  void run_offloaded();
  void flush();
  void close();
  void let_go_of_self();
  bool congested() const { return out_.size() + writing_.size() > hub_.max_pending_output; }
  std::size_t max_input() const { return hub_.limits.max_frame_bytes + hub_.input_slack; }

  static constexpr std::size_t kInitialBuffer = 16 * 1024;

  ConnectionHub& hub_;
  Socket socket_;
  ConnectionState state_;
  LiveClients clients_;
  RequestParser parser_;
  std::unique_ptr<char[]> in_;
  std::size_t in_cap_ = 0, in_begin_ = 0, in_end_ = 0;
  std::string out_, writing_;
  std::uint64_t need_sequence_ = 0;
  WaiterId blocked_on_ = 0;
  std::shared_ptr<Connection> self_while_waiting_;  // set while a blocking acquire waits
  bool blocked_ = false;
  bool reading_ = false;
  bool write_in_flight_ = false;
  bool durable_wait_ = false;
  bool process_posted_ = false;
  bool closing_ = false;  // finish writing, then close
  bool closed_ = false;
};

}  // namespace holdfast::resp
