// One RESP client connection: the socket side of a Pipeline (pipeline.h).
//
// Lifecycle:
//  1. read(): bytes land in a bounded input buffer (never more than one maximal frame plus
//     slack; when it is full, reading pauses).
//  2. process(): every complete command in the buffer runs in order through the pipeline. A
//     command the service answers later (a blocking acquire in a queue, a call to the
//     database) stops processing until it finishes (later pipelined commands wait, as in
//     Redis). Processing also pauses while too much output waits for a slow reader.
//  3. flush(): the replies the pipeline has made leave in one write: one syscall per batch of
//     pipelined replies. Replies that arrive later (after the log made them durable, after a
//     queue) are sent by the loop at the end of its turn (LoopDriver::flush_later).
//  4. close(): on EOF, an error, QUIT or a protocol error. Its session ends in the service:
//     its waiting calls end, its session-scoped holds are released at once.
//
// Over TLS (a TCP listener with a certificate) the connection first finishes a handshake, within
// the context's handshake timeout, reading and writing the socket as it does afterwards; then
// read() takes ciphertext into the TLS engine (tls/engine.h), which decrypts it into the same
// input buffer, and flush() encrypts the batch of replies with one SSL_write and sends it with
// the same one write. A verified client certificate whose common name a caller carries
// (certCommonName) signs the connection in as that caller. The plain path (TCP, the Unix socket)
// only tests tls_ on the way.
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/active_clients.h"
#include "server/events/push_batch.h"
#include "server/loop_driver.h"
#include "server/metrics.h"
#include "server/resp/codec.h"
#include "server/resp/pipeline.h"
#include "server/tls/context.h"
#include "server/tls/handshake_failure.h"

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
  LoopDriver& loop;
  Pipeline::Env env;
  ParserLimits limits;
  std::unordered_map<SessionId, std::weak_ptr<Connection>> live;
  SessionId* last_id;  // one id space for RESP and HTTP sessions
  // The fuzzer lowers these two to reach their edges often.
  // Past this much output waiting for a slow reader, a connection stops running its commands
  // until the reader catches up.
  std::size_t max_pending_output = 4 * 1024 * 1024;
  // The input buffer holds at most one maximal command (limits.max_frame_bytes) and this much
  // more; when it is full of commands that cannot run yet, reading pauses.
  std::size_t input_slack = 64 * 1024;
  // Counts the connections that send requests (the server's; null: not counted).
  ActiveClients* active = nullptr;
};

class Connection final : public std::enable_shared_from_this<Connection>,
                         public ReplySender,
                         private Pipeline::Events {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  // With `tls`, the connection speaks TLS with that context's certificate.
  Connection(ConnectionHub& hub, Socket socket, tls::ServerContextPtr tls = nullptr);
  ~Connection() override;

  void start();
  // The server is stopping: no further input is processed; replies still to come (the
  // service answers its waiting calls with UNAVAILABLE) are sent, then the connection closes.
  void shutdown();
  void flush() override;
  SessionId id() const { return id_; }
  // What CLIENT LIST shows of this connection. Read on the event loop only.
  const ConnectionState& state() { return pipeline_.state(); }
  // Copies the buffer figures into state() (CLIENT LIST's qbuf, qbuf-free, omem).
  void note_buffers();
  // CLIENT KILL from another connection: closes this one from the loop, after the current
  // step (the caller may be in the middle of its own processing).
  void kill();

 private:
  void replies_ready() override;
  void pushes_ready() override;
  void resume() override;
  void keep_alive(bool calls_in_flight) override;
  std::size_t unsent_bytes() const override { return writing_.size() + shared_.size(); }
  bool share(const events::SharedText& frames) override;
  void fell_behind(bool at_once) override;
  // After fell_behind(): closes the connection once 10 s pass with nothing written.
  void watch_progress(std::uint64_t written_before);

  struct Tls;

  void read();
  // Room at the end of the input buffer (moving or growing it); false when it is full of
  // commands that cannot run yet.
  bool make_room();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void read_tls();
  void on_tls_read(const boost::system::error_code& ec, std::size_t n);
  void continue_handshake();
  void handshake_failed(tls::HandshakeFailure why, std::string_view detail);
  // Decrypts what the engine holds into the input buffer, runs it, reads on.
  void decrypt_and_process();
  void flush_tls();
  void flush_shared(std::string& out);
  void write_rest();
  void process();
  void post_process();
  void close();
  bool congested() const {
    return pipeline_.output().size() + unsent_bytes() > hub_.max_pending_output;
  }
  std::size_t max_input() const { return hub_.limits.max_frame_bytes + hub_.input_slack; }

  static constexpr std::size_t kInitialBuffer = 16 * 1024;

  ConnectionHub& hub_;
  Socket socket_;
  const SessionId id_;
  LiveClients clients_;
  Pipeline pipeline_;
  RequestParser parser_;
  std::unique_ptr<char[]> in_;
  std::size_t in_cap_ = 0, in_begin_ = 0, in_end_ = 0;
  std::string writing_;
  // Lock events shared with other watchers (share()): they leave after writing_ and before
  // the pipeline's output.
  events::SharedText shared_;
  std::unique_ptr<Tls> tls_;                          // TLS listeners only
  std::shared_ptr<Connection> self_;                  // set while calls are in flight
  std::optional<boost::asio::steady_timer> cut_off_;  // a listener fell behind: watch it
  events::PushBatch push_batch_;                      // pushes_ready(): when events leave
  std::uint64_t written_ = 0;                         // bytes the socket took, all told
  bool reading_ = false;
  bool write_in_flight_ = false;
  bool flush_scheduled_ = false;
  bool process_posted_ = false;
  bool closing_ = false;  // finish writing, then close
  ActiveClients::Stamp active_stamp_;
  bool closed_ = false;
};

}  // namespace holdfast::resp
