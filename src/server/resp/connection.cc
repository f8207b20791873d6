#include "server/resp/connection.h"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cstring>

#include "server/resp/read_space.h"
#include "server/tls/engine.h"
#include "server/tls/handshake.h"

namespace holdfast::resp {

// A TLS connection's session and the end of the time its handshake may take.
struct Connection::Tls {
  Tls(boost::asio::io_context& io, tls::ServerContextPtr ctx)
      : context(std::move(ctx)), engine(context->ssl.native_handle()), deadline(io) {}
  tls::ServerContextPtr context;  // the certificate it started with, whatever SIGHUP loads
  tls::Engine engine;
  boost::asio::steady_timer deadline;
  bool counted = false;  // in holdfast_tls_connections
};

Connection::Connection(ConnectionHub& hub, Socket socket, tls::ServerContextPtr tls)
    : hub_(hub),
      socket_(std::move(socket)),
      id_(++*hub.last_id),
      clients_(hub),
      pipeline_(hub.env, id_, *this, &clients_),
      parser_(hub.limits),
      push_batch_(hub.io) {
  describe_endpoints(socket_, pipeline_.state());
  in_cap_ = std::min(kInitialBuffer, max_input());
  in_ = std::make_unique<char[]>(in_cap_);
  if (tls) tls_ = std::make_unique<Tls>(hub.io, std::move(tls));
}

Connection::~Connection() = default;

void Connection::start() {
  hub_.live[id_] = weak_from_this();
  // flush() writes synchronously first; that write must never block the loop.
  boost::system::error_code ignored;
  socket_.non_blocking(true, ignored);
  if (tls_) {
    // A client that never finishes its handshake is let go: the loop serves the others
    // meanwhile, since the handshake only advances as its bytes arrive.
    tls_->deadline.expires_after(tls_->context->handshake_timeout);
    tls_->deadline.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->closed_ || self->tls_->engine.established()) return;
      self->handshake_failed(tls::HandshakeFailure::kTimeout, "no handshake in time");
    });
  }
  read();
}

bool Connection::make_room() {
  if (in_end_ == in_cap_) {
    if (in_begin_ > 0) {
      std::memmove(in_.get(), in_.get() + in_begin_, in_end_ - in_begin_);
      in_end_ -= in_begin_;
      in_begin_ = 0;
    } else if (in_cap_ < max_input()) {
      std::size_t cap = std::min(in_cap_ * 2, max_input());
      auto bigger = std::make_unique<char[]>(cap);
      std::memcpy(bigger.get(), in_.get(), in_end_);
      in_ = std::move(bigger);
      in_cap_ = cap;
    } else {
      return false;  // full of unprocessed commands: resume when processing drains it
    }
  }
  return true;
}

void Connection::read() {
  if (reading_ || closed_ || closing_) return;
  if (tls_) {
    read_tls();
    return;
  }
  if (!make_room()) return;
  reading_ = true;
  // ReadSpace: after a short read, the next one waits for epoll rather than trying recv() first.
  socket_.async_read_some(ReadSpace(in_.get() + in_end_, in_cap_ - in_end_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->on_read(ec, n); });
}

void Connection::on_read(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    close();
    return;
  }
  in_end_ += n;
  process();
  read();
}

void Connection::read_tls() {
  tls::Engine& engine = tls_->engine;
  if (engine.established()) {
    if (!make_room()) return;
    if (engine.has_input()) {
      // What the last decryption left for want of room: decrypt it from the loop, not from
      // inside the processing that made the room.
      reading_ = true;
      boost::asio::post(hub_.io, [self = shared_from_this()] {
        self->reading_ = false;
        if (!self->closed_) self->decrypt_and_process();
      });
      return;
    }
  }
  reading_ = true;
  char* space = engine.input_space();
  socket_.async_read_some(ReadSpace(space, engine.input_space_size()),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->on_tls_read(ec, n); });
}

void Connection::on_tls_read(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    if (tls_->engine.established()) {
      close();
    } else {
      handshake_failed(tls::HandshakeFailure::kClosed, ec.message());
    }
    return;
  }
  tls_->engine.received(n);
  if (tls_->engine.established()) {
    decrypt_and_process();
  } else {
    continue_handshake();
  }
}

void Connection::continue_handshake() {
  tls::Engine& engine = tls_->engine;
  const tls::Engine::Status st = engine.handshake();
  if (st == tls::Engine::Status::kFailed) {
    handshake_failed(engine.failure(), engine.failure_text());
    return;
  }
  flush();  // the server's flight, or what the finished handshake adds (session tickets)
  if (closed_) return;
  if (st == tls::Engine::Status::kWantInput) {
    read();
    return;
  }
  tls_->deadline.cancel();
  tls_->counted = true;
  if (hub_.env.metrics != nullptr) hub_.env.metrics->tls_opened();
  if (auto caller = tls::certificate_caller(engine.native(), hub_.env.auth))
    pipeline_.sign_in_by_certificate(std::move(*caller));
  // The client's first commands may have come with its last handshake message.
  decrypt_and_process();
}

void Connection::handshake_failed(tls::HandshakeFailure why, std::string_view detail) {
  if (closed_) return;
  tls::report_failure(hub_.env.metrics, why, detail, id_, pipeline_.state().peer_address);
  // The alert OpenSSL wrote, if any, goes out on the way (the socket is non-blocking: at
  // most what fits, which an alert always does).
  const std::string& alert = tls_->engine.output();
  boost::system::error_code ignored;
  if (!alert.empty()) socket_.write_some(boost::asio::buffer(alert), ignored);
  tls_->engine.clear_output();
  close();
}

void Connection::decrypt_and_process() {
  tls::Engine& engine = tls_->engine;
  bool peer_closed = false;
  while (make_room()) {
    std::size_t n = 0;
    const tls::Engine::Status st = engine.read(in_.get() + in_end_, in_cap_ - in_end_, &n);
    if (st == tls::Engine::Status::kOk) {
      in_end_ += n;
      continue;
    }
    if (st == tls::Engine::Status::kFailed) {
      close();  // a broken record after the handshake: nothing more can be read
      return;
    }
    peer_closed = st == tls::Engine::Status::kClosed;
    break;  // kWantInput: everything received is decrypted
  }
  process();
  if (peer_closed) {
    close();
    return;
  }
  read();
}

void Connection::process() {
  process_posted_ = false;
  if (closed_) return;
  pipeline_.drain();  // the rest of a transaction a waiting call had stopped
  bool ran = false;
  while (pipeline_.ready() && !closing_ && !congested() && in_begin_ < in_end_) {
    std::size_t consumed = 0;
    std::string_view pending(in_.get() + in_begin_, in_end_ - in_begin_);
    ParseStatus st = parser_.parse(pending, &consumed);
    if (st == ParseStatus::kIncomplete) {
      if (in_begin_ == 0 && in_end_ == in_cap_ && in_cap_ >= max_input()) {
        pipeline_.error_line("ERR Protocol error: command is larger than " +
                             std::to_string(hub_.limits.max_frame_bytes) + " bytes");
        closing_ = true;
      }
      break;
    }
    if (st == ParseStatus::kError) {
      pipeline_.error_line("ERR Protocol error: " + parser_.error());
      closing_ = true;
      break;
    }
    // The arguments point into in_, which nothing moves before the next read().
    in_begin_ += consumed;
    if (parser_.args().empty()) continue;
    ran = true;
    if (pipeline_.run(parser_.args()) == Flow::kClose) closing_ = true;
  }
  if (ran && hub_.active != nullptr) hub_.active->sent(active_stamp_);
  // Rewind an empty buffer, but not under a read in flight: that read fills the buffer from the
  // offset it was started at, and on_read() counts its bytes from in_end_.
  if (in_begin_ == in_end_ && !reading_) in_begin_ = in_end_ = 0;
  // Wake-ups first: a release hands its key to the next waiter, whose grant is on the critical
  // path of a hot key; this connection's own reply can follow it.
  hub_.loop.after_event();
  flush();
}

void Connection::post_process() {
  if (process_posted_ || closed_) return;
  process_posted_ = true;
  boost::asio::post(hub_.io, [self = shared_from_this()] {
    self->process();
    self->read();
  });
}

void Connection::replies_ready() {
  if (flush_scheduled_ || closed_) return;
  flush_scheduled_ = true;
  hub_.loop.flush_later(shared_from_this());
}

// Lock events wait a moment to leave together (events/push_batch.h: the rule both front ends
// follow).
void Connection::pushes_ready() {
  if (flush_scheduled_ || closed_) return;
  const bool full = push_batch_.add(pipeline_.output().size() + shared_.size(), [this] {
    return [self = shared_from_this()] {
      self->replies_ready();
      self->hub_.loop.after_event();  // a timer's turn: the loop sends what is ready
    };
  });
  if (full) replies_ready();
}

// Continue with pipelined commands from the loop, not from inside the service's call.
void Connection::resume() { post_process(); }

void Connection::keep_alive(bool calls_in_flight) {
  if (calls_in_flight) {
    self_ = shared_from_this();
  } else {
    let_go_from_loop(hub_.io, self_);
  }
}

bool Connection::share(const events::SharedText& frames) {
  if (closed_ || tls_) return false;  // TLS: the engine copies every byte it encrypts anyway
  if (!shared_.block) {
    shared_ = frames;
    return true;
  }
  if (shared_.block != frames.block || shared_.end != frames.begin) return false;
  shared_.end = frames.end;  // the next batch of the same block: one range
  return true;
}

void Connection::flush() {
  flush_scheduled_ = false;
  if (closed_ || write_in_flight_) return;
  if (tls_) {
    flush_tls();
    return;
  }
  std::string& out = pipeline_.output();
  if (shared_.block) {
    flush_shared(out);
    return;
  }
  if (out.empty()) {
    if (closing_ && !pipeline_.in_flight()) close();
    return;
  }
  // Replies almost always fit in the socket's send buffer: write them now, instead of starting
  // an asynchronous write whose completion is one more handler (and one more pass over the
  // input) per command. Whatever does not fit goes the asynchronous way.
  boost::system::error_code ec;
  const std::size_t n = socket_.write_some(boost::asio::buffer(out), ec);
  if (!ec) written_ += n;
  if (ec && ec != boost::asio::error::would_block && ec != boost::asio::error::try_again) {
    close();
    return;
  }
  if (!ec && n == out.size()) {
    const bool was_congested = congested();
    out.clear();
    if (closing_ && !pipeline_.in_flight()) {
      close();
    } else if (was_congested && pipeline_.ready() && in_begin_ < in_end_) {
      // process() stopped at the output limit: go on from the loop, not from inside it.
      post_process();
    }
    return;
  }
  if (!ec) out.erase(0, n);
  writing_.swap(out);
  write_rest();
}

// The flush of a watcher's shared events and, after them, the connection's own output: one
// write of both; what the socket does not take is copied and leaves as flush()'s rest does.
void Connection::flush_shared(std::string& out) {
  const std::string_view shared = shared_.view();
  const std::array<boost::asio::const_buffer, 2> both = {boost::asio::buffer(shared),
                                                         boost::asio::buffer(out)};
  boost::system::error_code ec;
  const std::size_t n = socket_.write_some(both, ec);
  if (ec && ec != boost::asio::error::would_block && ec != boost::asio::error::try_again) {
    close();
    return;
  }
  const bool was_congested = congested();
  const std::size_t sent = ec ? 0 : n;
  written_ += sent;
  if (sent < shared.size()) writing_.assign(shared.substr(sent));
  writing_.append(out, sent > shared.size() ? sent - shared.size() : 0);
  shared_ = {};
  out.clear();
  if (!writing_.empty()) {
    write_rest();
  } else if (closing_ && !pipeline_.in_flight()) {
    close();
  } else if (was_congested && pipeline_.ready() && in_begin_ < in_end_) {
    post_process();  // as flush() does once the output drained
  }
}

// A TLS connection's flush: the replies become records with one SSL_write, which leave as the
// plain path's do, in one write with the rest sent asynchronously.
void Connection::flush_tls() {
  std::string& out = pipeline_.output();
  tls::Engine& engine = tls_->engine;
  const bool was_congested = congested();
  if (!out.empty()) {
    if (!engine.write(out)) {
      close();
      return;
    }
    out.clear();
  }
  const std::string& records = engine.output();
  if (records.empty()) {
    if (closing_ && !pipeline_.in_flight()) close();
    return;
  }
  boost::system::error_code ec;
  const std::size_t n = socket_.write_some(boost::asio::buffer(records), ec);
  if (!ec) written_ += n;
  if (ec && ec != boost::asio::error::would_block && ec != boost::asio::error::try_again) {
    close();
    return;
  }
  if (!ec && n == records.size()) {
    engine.clear_output();
    if (closing_ && !pipeline_.in_flight()) {
      close();
    } else if (was_congested && pipeline_.ready() && in_begin_ < in_end_) {
      post_process();
    }
    return;
  }
  writing_.assign(records, ec ? 0 : n);
  engine.clear_output();
  write_rest();
}

// What the socket did not take at once (writing_) leaves asynchronously; then the replies
// made meanwhile, and the commands that waited for the output to drain.
void Connection::write_rest() {
  write_in_flight_ = true;
  boost::asio::async_write(
      socket_, boost::asio::buffer(writing_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
        self->write_in_flight_ = false;
        if (!ec) self->written_ += self->writing_.size();
        self->writing_.clear();
        if (ec) {
          self->close();
          return;
        }
        const bool was_congested = !self->pipeline_.output().empty();
        self->flush();
        if (was_congested || self->pipeline_.ready()) {
          self->process();
          self->read();
        }
      });
}

// A subscriber or watcher that fell behind. A subscriber past its limit is closed at once, as
// Redis closes it. A watcher's last frame (a lock event reset) goes out after what is already
// being written, then the connection closes; a peer that reads nothing for 10 seconds is cut
// off, so the written bytes do not stay. Either from the loop: this runs inside another
// connection's PUBLISH, or the bus's telling of an event.
void Connection::fell_behind(bool at_once) {
  shared_ = {};  // not being written yet: dropped, as the pipeline's output is
  if (closed_ || cut_off_) return;
  closing_ = true;
  if (at_once) {
    kill();
    return;
  }
  cut_off_.emplace(hub_.io);
  watch_progress(written_);
}

void Connection::watch_progress(std::uint64_t written_before) {
  cut_off_->expires_after(std::chrono::seconds(10));
  cut_off_->async_wait(
      [self = shared_from_this(), written_before](const boost::system::error_code& ec) {
        if (ec || self->closed_) return;
        if (self->written_ == written_before) {
          self->close();  // nothing read meanwhile
        } else {
          self->watch_progress(self->written_);
        }
      });
}

void Connection::note_buffers() {
  ConnectionState& state = pipeline_.state();
  state.input_buffered = in_end_ - in_begin_;
  state.input_free = in_cap_ - in_end_;
  state.output_buffered = pipeline_.output().size() + unsent_bytes();
}

void Connection::kill() {
  boost::asio::post(hub_.io, [self = shared_from_this()] { self->close(); });
}

void Connection::shutdown() {
  if (closed_) return;
  // Calls still waiting are answered by the service (UNAVAILABLE); the connection closes once
  // those replies are out.
  closing_ = true;
  flush();
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  shared_ = {};
  if (cut_off_) cut_off_->cancel();
  push_batch_.cancel();
  pipeline_.end();
  hub_.live.erase(id_);
  boost::system::error_code ignored;
  if (tls_ && tls_->engine.established()) {
    // close_notify, so that the client reads the end of the session rather than a cut
    // connection; best effort, as the socket may be gone or full.
    if (tls_->counted && hub_.env.metrics != nullptr) hub_.env.metrics->tls_closed();
    tls_->engine.clear_output();
    if (!write_in_flight_ && tls_->engine.shutdown())
      socket_.write_some(boost::asio::buffer(tls_->engine.output()), ignored);
  }
  if (tls_) tls_->deadline.cancel();
  socket_.close(ignored);
  hub_.loop.after_event();
}

}  // namespace holdfast::resp
