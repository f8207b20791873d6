#include "server/http/event_stream.h"

#include <chrono>
#include <cstdio>

namespace holdfast::http {
namespace {

constexpr auto kKeepAliveEvery = std::chrono::seconds(15);
constexpr auto kCutOffAfter = std::chrono::seconds(10);

const char* reason_phrase(int status) { return status == 200 ? "OK" : "Unknown"; }

std::string sse_event(std::string_view name, std::uint64_t id, std::string_view data) {
  std::string e;
  e.reserve(data.size() + name.size() + 40);
  e += "id: ";
  e += std::to_string(id);
  e += "\nevent: ";
  e += name;
  e += "\ndata: ";
  e += data;
  e += "\n\n";
  return e;
}

}  // namespace

EventStream::EventStream(boost::asio::io_context& io, events::EventBus& bus, Socket& socket,
                         std::size_t limit)
    : bus_(bus), socket_(socket), limit_(limit), keep_alive_(io), cut_off_(io) {}

EventStream::~EventStream() { end(); }

void EventStream::start(const Response& head, const EventStreamStart& what,
                        const Principal& principal) {
  std::string h = "HTTP/1.1 " + std::to_string(head.status) + " " + reason_phrase(head.status) +
                  "\r\nServer: holdfast\r\nContent-Type: text/event-stream\r\n"
                  "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"
                  "Transfer-Encoding: chunked\r\n";
  for (const auto& [name, value] : head.headers) h += name + ": " + value + "\r\n";
  h += "\r\n";
  head_ = std::move(h);
  // Events the bus replays (Last-Event-ID) come inside watch(), after the head; they can only
  // when events already flow.
  if (bus_.ready()) open();
  watching_ = true;
  const auto started = bus_.watch(*this, principal, what.prefix, what.last_event_id);
  // From now on: the reader reads the state anew and goes on from here.
  reset_due_ = started == events::EventBus::Start::kReset;
  if (!opened_ && bus_.ready()) open();  // a single server: events flow from watch() on
  if (opened_ && reset_due_) {
    reset_due_ = false;
    on_reset(bus_.last_id());
  }
  socket_.wait_for_hangup([this] {
    end();
    socket_.close_socket();
  });
  keep_alive();
  write_more();
}

// The response head leaves only once events flow, so that a reader that read it (the page,
// which then reads the locks) misses no change: on a node over PostgreSQL the first reader of
// the cluster waits for the triggers to be on.
void EventStream::open() {
  opened_ = true;
  pending_.insert(0, head_);
  // The reader learns the stream is on, and how soon to come back after a drop.
  queue(": holdfast lock events\nretry: 2000\n\n");
  if (reset_due_) {
    reset_due_ = false;
    on_reset(bus_.last_id());
  }
}

void EventStream::on_ready() {
  if (ended_ || opened_) return;
  open();
  write_more();
}

void EventStream::keep_alive() {
  keep_alive_.expires_after(kKeepAliveEvery);
  keep_alive_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || ended_) return;
    if (!closing_ && opened_) queue(": keep-alive\n\n");
    write_more();
    keep_alive();
  });
}

void EventStream::queue(std::string_view text) {
  char size[24];
  const int n = std::snprintf(size, sizeof(size), "%zx\r\n", text.size());
  pending_.append(size, static_cast<std::size_t>(n));
  pending_.append(text);
  pending_.append("\r\n", 2);
}

void EventStream::on_event(const events::Published& event) {
  if (ended_ || closing_ || !opened_) return;
  if (pending_.size() + writing_.size() > limit_) {
    // Behind: no more events; the reader starts over from the state.
    bus_.dropped();
    bus_.unwatch(*this);
    watching_ = false;
    pending_.clear();  // what is not being written yet goes: the reset follows what is
    queue("event: reset\ndata: {\"event\":\"reset\"}\n\n");
    pending_.append("0\r\n\r\n");
    closing_ = true;
    watch_progress(written_);
    write_more();
    return;
  }
  queue(sse_event(event_name(event.kind), event.id, event.json));
  write_more();
}

void EventStream::on_reset(std::uint64_t id) {
  if (ended_ || closing_ || !opened_) return;
  queue(sse_event("reset", id, "{\"event\":\"reset\"}"));
  write_more();
}

void EventStream::write_more() {
  if (sending_ || ended_ || !opened_) return;
  if (pending_.empty()) {
    if (closing_) {
      end();
      socket_.close_socket();
    }
    return;
  }
  writing_.swap(pending_);
  pending_.clear();
  sending_ = true;
  socket_.send_bytes(writing_, [this](bool ok) {
    sending_ = false;
    if (ok) written_ += writing_.size();
    writing_.clear();
    if (ended_) return;
    if (!ok) {
      end();
      socket_.close_socket();
      return;
    }
    write_more();
  });
}

void EventStream::watch_progress(std::uint64_t written_before) {
  cut_off_.expires_after(kCutOffAfter);
  cut_off_.async_wait([this, written_before](const boost::system::error_code& ec) {
    if (ec || ended_) return;
    if (written_ == written_before) {
      end();  // the reader read nothing meanwhile
      socket_.close_socket();
    } else {
      watch_progress(written_);
    }
  });
}

void EventStream::finish() {
  if (ended_ || closing_) return;
  if (!opened_) {
    // Never begun: the connection just closes.
    end();
    socket_.close_socket();
    return;
  }
  if (watching_) bus_.unwatch(*this);
  watching_ = false;
  pending_.append("0\r\n\r\n");
  closing_ = true;
  write_more();
}

void EventStream::end() {
  if (ended_) return;
  ended_ = true;
  if (watching_) bus_.unwatch(*this);
  watching_ = false;
  keep_alive_.cancel();
  cut_off_.cancel();
}

}  // namespace holdfast::http
