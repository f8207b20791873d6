// EventStream: `GET /v1/events` on one HTTP connection, a Server-Sent Events stream of lock
// events (docs/events.md), after the exchange authenticated and read the request.
//
//  1. start(): the response head (200, text/event-stream, no-cache, chunked) and a first
//     comment leave as soon as events flow (at once on a single server; on a node over
//     PostgreSQL the first reader of the cluster waits for its triggers), so the reader knows
//     the watch is on; then the events the bus replays (Last-Event-ID), or `event: reset` when
//     it cannot, and the live ones. Each event is `id:`, `event:` and one `data:` line of
//     JSON. Events leave in batches, as LOCK.WATCH's do (events/push_batch.h), each batch one
//     chunk of one write.
//  2. A comment every 15 s keeps proxies from closing a quiet stream.
//  3. Its backlog (written and not yet sent) is bounded: an event that finds more than
//     `limit` bytes waiting is not sent, nor is what waits behind the write in progress; the
//     reader gets `event: reset` after that write and the stream ends (closed once 10 s pass
//     in which the reader read nothing). The bus counts it.
//  4. It ends when the reader hangs up or the server stops (a final chunk, then close).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <functional>
#include <string>

#include "core/principal.h"
#include "server/events/event_bus.h"
#include "server/events/push_batch.h"
#include "server/http/routes.h"

namespace holdfast::http {

class EventStream final : public events::Watcher {
 public:
  // The connection's side (the session).
  class Socket {
   public:
    // Sends `bytes` (valid until `done`); `done(ok)` runs on the loop. One send at a time.
    virtual void send_bytes(const std::string& bytes, std::function<void(bool ok)> done) = 0;
    // `done` runs when the reader hangs up (anything it sends is read and dropped).
    virtual void wait_for_hangup(std::function<void()> done) = 0;
    // Closes the connection (ends the session).
    virtual void close_socket() = 0;

   protected:
    ~Socket() = default;
  };

  EventStream(boost::asio::io_context& io, events::EventBus& bus, Socket& socket,
              std::size_t limit);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // `head` is the exchange's response (its status, content type and headers, such as CORS);
  // `principal` outlives the stream.
  void start(const Response& head, const EventStreamStart& what, const Principal& principal);
  // The server stops: the stream ends with a final chunk, then the connection closes.
  void finish();
  // The connection closed: let go of the bus and the timers.
  void end();

  void on_event(const events::Published& event) override;
  void on_events(const events::Batch& batch) override;
  void on_reset(std::uint64_t id) override;
  void on_ready() override;

 private:
  // Text of the stream, to leave with the next write (at once: write_more(); or with the batch:
  // batch_more()).
  void queue(std::string_view text) { pending_.append(text); }
  void batch_more();
  // Over its limit: the stream is reset and ends (true), as the header says.
  bool behind();
  void write_more();
  void open();
  void keep_alive();
  // After falling behind: ends the stream once 10 s pass with nothing written.
  void watch_progress(std::uint64_t written_before);

  events::EventBus& bus_;
  Socket& socket_;
  const std::size_t limit_;
  boost::asio::steady_timer keep_alive_;
  boost::asio::steady_timer cut_off_;
  events::PushBatch batch_;
  std::string pending_;        // the stream's text not yet written (a chunk of the next write)
  std::string writing_;        // the write in progress
  std::uint64_t written_ = 0;  // bytes sent, all told
  std::string head_;
  bool head_due_ = false;   // the head goes before the next chunk
  bool last_due_ = false;   // the final chunk goes after it
  bool opened_ = false;     // the head is queued: events may follow
  bool reset_due_ = false;  // the reset to send once open
  bool watching_ = false;
  bool sending_ = false;
  bool closing_ = false;  // close once what is queued has left
  bool ended_ = false;
};

}  // namespace holdfast::http
