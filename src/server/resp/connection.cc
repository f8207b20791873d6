#include "server/resp/connection.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cstring>

#include "server/resp/read_space.h"

namespace holdfast::resp {

Connection::Connection(ConnectionHub& hub, Socket socket)
    : hub_(hub),
      socket_(std::move(socket)),
      id_(++*hub.last_id),
      clients_(hub),
      pipeline_(hub.env, id_, *this, &clients_),
      parser_(hub.limits) {
  describe_endpoints(socket_, pipeline_.state());
  in_cap_ = std::min(kInitialBuffer, max_input());
  in_ = std::make_unique<char[]>(in_cap_);
}

Connection::~Connection() = default;

void Connection::start() {
  hub_.live[id_] = weak_from_this();
  // flush() writes synchronously first; that write must never block the loop.
  boost::system::error_code ignored;
  socket_.non_blocking(true, ignored);
  read();
}

void Connection::read() {
  if (reading_ || closed_ || closing_) return;
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
      return;  // full of unprocessed commands: resume when processing drains it
    }
  }
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

void Connection::process() {
  process_posted_ = false;
  if (closed_) return;
  pipeline_.drain();  // the rest of a transaction a waiting call had stopped
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
    if (pipeline_.run(parser_.args()) == Flow::kClose) closing_ = true;
  }
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

// A watcher of a busy server gets an event or more in nearly every loop round; a send per round
// for each watcher would cost the lock path more than the events do (bench (j)). Its events
// wait up to kPushDelay to go out together, or until kPushBatch bytes are waiting.
void Connection::pushes_ready() {
  constexpr auto kPushDelay = std::chrono::milliseconds(2);
  constexpr std::size_t kPushBatch = 64 * 1024;
  if (flush_scheduled_ || closed_) return;
  if (pipeline_.output().size() >= kPushBatch) {
    replies_ready();
    return;
  }
  if (push_delayed_) return;
  if (!push_delay_) push_delay_.emplace(hub_.io);
  push_delayed_ = true;
  push_delay_->expires_after(kPushDelay);
  push_delay_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->push_delayed_ = false;
    if (ec) return;
    self->replies_ready();
    self->hub_.loop.after_event();  // a timer's turn: the loop sends what is ready
  });
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

void Connection::flush() {
  flush_scheduled_ = false;
  if (closed_ || write_in_flight_) return;
  std::string& out = pipeline_.output();
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
  state.output_buffered = pipeline_.output().size() + writing_.size();
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
  if (cut_off_) cut_off_->cancel();
  if (push_delay_) push_delay_->cancel();
  pipeline_.end();
  hub_.live.erase(id_);
  boost::system::error_code ignored;
  socket_.close(ignored);
  hub_.loop.after_event();
}

}  // namespace holdfast::resp
