// One connection to a Holdfast server: a non-blocking POSIX socket (TCP or Unix) driven with
// poll() and absolute deadlines, so every wait has an end.
//
// Lifecycle:
//   1. open(): connect within the deadline (for rediss://, and a TLS handshake: tls.h), then the
//      handshake in one round trip: `AUTH` (only
//      when a token is configured) pipelined with `HELLO 3`, so replies with fields are RESP3
//      maps. A peer whose HELLO does not say server=holdfast is refused.
//   2. send() + receive() per call. A send() that throws delivered at most part of the command,
//      which the server never runs, so the caller may retry it elsewhere. A receive() that
//      throws leaves the outcome unknown; the connection is then broken for good.
//   3. usable() before reuse: an idle connection whose peer closed it (a restarted server) or
//      sent something unasked is not reused.
// Not thread-safe: the pool gives a connection to one call at a time.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "client/resp_codec.h"
#include "client/tls.h"
#include "client/url.h"

namespace holdfast::inline v0::client_internal {

using Deadline = std::chrono::steady_clock::time_point;

class Connection {
 public:
  // Throws ConnectionError (unreachable, timed out, not a Holdfast server) or the mapped
  // server error of the handshake (UnauthenticatedError for a bad or missing token).
  // `tls` is the Client's TLS context, required for an address with tls (rediss://).
  static std::unique_ptr<Connection> open(const ServerAddress& address, Deadline deadline,
                                          const TlsContext* tls = nullptr);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Writes `bytes` (one encoded command) by the deadline. Throws ConnectionError.
  void send(std::string_view bytes, Deadline deadline);
  // Reads one reply by the deadline; `command` names the call in error messages. Error
  // replies are returned, not thrown. Throws ConnectionError or ProtocolError.
  Reply receive(Deadline deadline, std::string_view command);

  bool usable() const;
  bool broken() const { return broken_; }
  // A connection that took a session hold must stay open as long as the hold should last.
  void pin() { pinned_ = true; }
  bool pinned() const { return pinned_; }
  const std::string& peer() const { return peer_; }

 private:
  Connection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  [[noreturn]] void fail(const std::string& message);
  // Over TLS: the session's handshake, and send()'s and receive()'s reads and writes.
  void tls_handshake(const TlsContext& context, const std::string& host, Deadline deadline);
  void tls_send(std::string_view bytes, Deadline deadline);
  // Appends what the session has to in_, waiting until the deadline for it; false when the
  // deadline passed first.
  bool tls_receive_some(Deadline deadline, std::string_view command);
  // receive() for the handshake's first reply: a ProtocolError then names a peer that does
  // not speak RESP (an HTTP server, details "protocol": "http") instead of the bad byte.
  Reply first_reply(Deadline deadline, std::string_view command);

  int fd_ = -1;
  std::unique_ptr<TlsSession> tls_;
  std::string peer_;
  std::string in_;      // bytes received and not yet parsed
  ReplyFramer framer_;  // how far into in_'s first reply the scan has come
  bool broken_ = false;
  bool pinned_ = false;
};

}  // namespace holdfast::inline v0::client_internal
