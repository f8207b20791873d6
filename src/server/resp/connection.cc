#include "server/resp/connection.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cstring>

#include "server/resp/read_space.h"
#include "server/resp/render.h"

namespace holdfast::resp {

Connection::Connection(ConnectionHub& hub, Socket socket)
    : hub_(hub), socket_(std::move(socket)), clients_(hub), parser_(hub.limits) {
  state_.id = ++hub_.last_id;
  describe_endpoints(socket_, state_);
  if (hub_.info.auth_mode) {
    state_.authenticated = false;
  } else {
    state_.principal = Principal::local_owner();
    state_.authenticated = true;
  }
  in_cap_ = std::min(kInitialBuffer, max_input());
  in_ = std::make_unique<char[]>(in_cap_);
}

Connection::~Connection() = default;

void Connection::start() {
  hub_.live[state_.id] = weak_from_this();
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
  ReplyWriter writer(out_, state_.proto);
  while (!blocked_ && !closing_ && !congested() && in_begin_ < in_end_) {
    std::size_t consumed = 0;
    std::string_view pending(in_.get() + in_begin_, in_end_ - in_begin_);
    ParseStatus st = parser_.parse(pending, &consumed);
    if (st == ParseStatus::kIncomplete) {
      if (in_begin_ == 0 && in_end_ == in_cap_ &&
          in_cap_ >= max_input()) {
        writer.error_line("ERR Protocol error: command is larger than " +
                          std::to_string(hub_.limits.max_frame_bytes) + " bytes");
        closing_ = true;
      }
      break;
    }
    if (st == ParseStatus::kError) {
      writer.error_line("ERR Protocol error: " + parser_.error());
      closing_ = true;
      break;
    }
    if (parser_.args().empty()) {
      in_begin_ += consumed;
      continue;
    }
    // CLIENT LIST's cmd= and idle=; written here, on the loop, where CLIENT LIST reads them.
    const CommandSpec* spec = find_command(parser_.args()[0]);
    state_.last_command = spec;
    state_.last_active = std::chrono::steady_clock::now();
    if (hub_.offload != nullptr && !runs_on_loop(spec)) {
      run_offloaded();
      in_begin_ += consumed;
      break;
    }
    in_begin_ += consumed;
    CommandContext ctx{hub_.service, state_,    writer,       this,
                       hub_.info,    hub_.auth, hub_.metrics, &clients_};
    Flow flow = execute(ctx, spec, parser_.args());
    if (flow == Flow::kBlock) {
      blocked_ = true;
      blocked_on_ = ctx.blocked_on;
      // The service keeps only a plain pointer to this connection as the waiter's client. With
      // its input buffer full of pipelined commands no read is in flight either, and nothing
      // else would keep the connection alive until the outcome arrives.
      self_while_waiting_ = shared_from_this();
    } else if (flow == Flow::kClose) {
      closing_ = true;
    }
  }
  // Rewind an empty buffer, but not under a read in flight: that read fills the buffer from the
  // offset it was started at, and on_read() counts its bytes from in_end_.
  if (in_begin_ == in_end_ && !reading_) in_begin_ = in_end_ = 0;
  // Every reply written so far may depend on anything appended so far.
  need_sequence_ = hub_.service.last_sequence();
  // Wake-ups first: a release hands its key to the next waiter, whose grant is on the critical
  // path of a hot key; this connection's own reply can follow it.
  hub_.loop.after_event();
  flush();
}

void Connection::run_offloaded() {
  std::vector<std::string> args(parser_.args().begin(), parser_.args().end());
  blocked_ = true;
  hub_.offload->submit([self = shared_from_this(), args = std::move(args)] {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    ReplyWriter writer(out, self->state_.proto);
    CommandContext ctx{self->hub_.service, self->state_,      writer, self.get(), self->hub_.info,
                       self->hub_.auth,    self->hub_.metrics};
    Flow flow = execute(ctx, views);
    boost::asio::post(self->hub_.io, [self, out = std::move(out), flow]() mutable {
      if (self->closed_) return;
      self->out_ += out;
      self->blocked_ = false;
      if (flow == Flow::kClose) self->closing_ = true;
      self->process();
      self->read();
    });
  });
}

void Connection::on_waiter_outcome(const WaiterOutcome& outcome) {
  const auto self = std::move(self_while_waiting_);  // lives to the end of this call
  if (closed_) return;
  ReplyWriter writer(out_, state_.proto);
  write_waiter_outcome(writer, outcome);
  blocked_ = false;
  blocked_on_ = 0;
  need_sequence_ = hub_.service.last_sequence();
  flush();  // the grant leaves now; it does not wait for the posted continuation
  // Continue with pipelined commands from the loop, not from inside the dispatcher.
  if (!process_posted_) {
    process_posted_ = true;
    boost::asio::post(hub_.io, [self = shared_from_this()] {
      self->process();
      self->read();
    });
  }
}

void Connection::flush() {
  if (closed_ || write_in_flight_) return;
  if (out_.empty()) {
    if (closing_ && !blocked_) close();
    return;
  }
  if (hub_.service.durable_sequence() < need_sequence_) {
    if (!durable_wait_) {
      durable_wait_ = true;
      hub_.loop.wait_durable([self = shared_from_this()] {
        self->durable_wait_ = false;
        self->flush();
      });
    }
    return;
  }
  // Replies almost always fit in the socket's send buffer: write them now, instead of starting
  // an asynchronous write whose completion is one more handler (and one more pass over the
  // input) per command. Whatever does not fit goes the asynchronous way.
  boost::system::error_code ec;
  const std::size_t n = socket_.write_some(boost::asio::buffer(out_), ec);
  if (ec && ec != boost::asio::error::would_block && ec != boost::asio::error::try_again) {
    close();
    return;
  }
  if (!ec && n == out_.size()) {
    const bool was_congested = congested();
    out_.clear();
    if (closing_ && !blocked_) {
      close();
    } else if (was_congested && !blocked_ && in_begin_ < in_end_ && !process_posted_) {
      // process() stopped at the output limit: go on from the loop, not from inside it.
      process_posted_ = true;
      boost::asio::post(hub_.io, [self = shared_from_this()] {
        self->process();
        self->read();
      });
    }
    return;
  }
  if (!ec) out_.erase(0, n);
  writing_.swap(out_);
  write_in_flight_ = true;
  boost::asio::async_write(
      socket_, boost::asio::buffer(writing_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
        self->write_in_flight_ = false;
        self->writing_.clear();
        if (ec) {
          self->close();
          return;
        }
        const bool was_congested = !self->out_.empty();
        self->flush();
        if (was_congested || !self->blocked_) {
          self->process();
          self->read();
        }
      });
}

void Connection::note_buffers() {
  state_.input_buffered = in_end_ - in_begin_;
  state_.input_free = in_cap_ - in_end_;
  state_.output_buffered = out_.size() + writing_.size();
}

void Connection::kill() {
  boost::asio::post(hub_.io, [self = shared_from_this()] { self->close(); });
}

void Connection::shutdown() {
  if (closed_) return;
  // An offloaded command in flight answers for itself (the service wakes it with UNAVAILABLE);
  // the connection closes once that reply is out.
  if (blocked_ && hub_.offload == nullptr) {
    hub_.service.cancel_waiter(blocked_on_);
    blocked_ = false;
    let_go_of_self();
    ReplyWriter writer(out_, state_.proto);
    write_error(writer, Error(ErrorCode::kUnavailable, "the server is shutting down"));
    need_sequence_ = hub_.service.last_sequence();
  }
  closing_ = true;
  flush();
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  if (blocked_) hub_.service.cancel_waiter(blocked_on_);
  blocked_ = false;
  let_go_of_self();
  if (hub_.offload != nullptr) {
    hub_.offload->submit([&service = hub_.service, id = state_.id] { service.end_session(id); });
  } else {
    hub_.service.end_session(state_.id);
  }
  hub_.live.erase(state_.id);
  boost::system::error_code ignored;
  socket_.close(ignored);
  hub_.loop.after_event();
}

// The waiter was cancelled: drop the connection's hold on itself from the loop, not here, where
// the caller may still be using the connection.
void Connection::let_go_of_self() {
  if (self_while_waiting_) boost::asio::post(hub_.io, [self = std::move(self_while_waiting_)] {});
}

}  // namespace holdfast::resp
