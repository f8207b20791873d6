#include "server/http/event_stream.h"

#include <chrono>
#include <cstdio>

namespace holdfast::http {
namespace {

constexpr auto kKeepAliveEvery = std::chrono::seconds(15);
constexpr auto kCutOffAfter = std::chrono::seconds(10);

const char* reason_phrase(int status) { return status == 200 ? "OK" : "Unknown"; }

void append_sse_event(std::string& e, std::string_view name, std::uint64_t id,
                      std::string_view data) {
  char digits[24];
  const int n = std::snprintf(digits, sizeof(digits), "%llu", static_cast<unsigned long long>(id));
  e += "id: ";
  e.append(digits, static_cast<std::size_t>(n));
  e += "\nevent: ";
  e += name;
  e += "\ndata: ";
  e += data;
  e += "\n\n";
}

void append_sse_event(std::string& out, const events::Published& event) {
  append_sse_event(out, event_name(event.kind), event.id, event.json);
}

}  // namespace

EventStream::EventStream(boost::asio::io_context& io, events::EventBus& bus, Socket& socket,
                         std::size_t limit)
    : bus_(bus), socket_(socket), limit_(limit), keep_alive_(io), cut_off_(io), batch_(io) {}

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
  head_due_ = true;
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

bool EventStream::behind() {
  if (pending_.size() + writing_.size() <= limit_) return false;
  // Behind: no more events; the reader starts over from the state.
  bus_.dropped();
  bus_.unwatch(*this);
  watching_ = false;
  pending_.clear();  // what is not being written yet goes: the reset follows what is
  queue("event: reset\ndata: {\"event\":\"reset\"}\n\n");
  last_due_ = true;
  closing_ = true;
  watch_progress(written_);
  write_more();
  return true;
}

void EventStream::on_event(const events::Published& event) {
  if (ended_ || closing_ || !opened_ || behind()) return;
  append_sse_event(pending_, event);
  batch_more();
}

// Written once per batch for every stream that sees all of it.
void EventStream::on_events(const events::Batch& batch) {
  if (ended_ || closing_ || !opened_ || behind()) return;
  queue(batch.text(events::Batch::kSse, &append_sse_event).view());
  batch_more();
}

void EventStream::batch_more() {
  const bool full = batch_.add(pending_.size(), [this] { return [this] { write_more(); }; });
  if (full) write_more();
}

void EventStream::on_reset(std::uint64_t id) {
  if (ended_ || closing_ || !opened_) return;
  append_sse_event(pending_, "reset", id, "{\"event\":\"reset\"}");
  write_more();
}

void EventStream::write_more() {
  if (sending_ || ended_ || !opened_) return;
  if (pending_.empty() && !head_due_ && !last_due_) {
    if (closing_) {
      end();
      socket_.close_socket();
    }
    return;
  }
  // One write: the head (the first time), what is pending as one chunk, the final chunk.
  writing_.clear();
  if (head_due_) writing_ = std::move(head_);
  head_due_ = false;
  if (!pending_.empty()) {
    char size[24];
    const int n = std::snprintf(size, sizeof(size), "%zx\r\n", pending_.size());
    writing_.append(size, static_cast<std::size_t>(n));
    writing_.append(pending_);
    writing_.append("\r\n", 2);
    pending_.clear();
  }
  if (last_due_) writing_.append("0\r\n\r\n");
  last_due_ = false;
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
    // What came meanwhile leaves with its batch; the end of the stream at once.
    if (closing_) {
      write_more();
    } else if (!pending_.empty()) {
      batch_more();
    }
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
  last_due_ = true;
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
  batch_.cancel();
}

}  // namespace holdfast::http
