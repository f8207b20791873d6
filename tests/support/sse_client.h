// A small blocking HTTP client for tests of the event stream (GET /v1/events): sends one GET,
// reads the response head, then reads Server-Sent Events out of the chunked body, one at a
// time. A plain (non-stream) response's body can be read whole instead.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace holdfast::testing {

struct SseEvent {
  std::string id;     // "" when the event had no id: line
  std::string event;  // "message" when it had no event: line
  std::string data;   // the data: lines, joined by '\n'
};

class SseClient {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // Connects to 127.0.0.1:port and sends GET `target` with `headers`; reads the response head.
  // `receive_buffer` > 0 makes the socket's receive buffer that small (a slow reader's test).
  static SseClient open(int port, const std::string& target, const Headers& headers = {},
                        int receive_buffer = 0, const std::string& method = "GET");
  SseClient(SseClient&& other) noexcept;
  ~SseClient();

  int status() const { return status_; }
  // A response header's value (case-insensitive name), or "" when absent.
  std::string header(const std::string& name) const;
  // The next event; throws std::runtime_error on timeout or when the stream ends.
  SseEvent next(int timeout_ms = 10000);
  // The next event, or nullopt when none comes within timeout_ms (the stream still open).
  std::optional<SseEvent> next_within(int timeout_ms);
  // A plain response's body (Content-Length), read whole.
  std::string body(int timeout_ms = 10000);
  // True when the server closes the connection within timeout_ms (reading what comes).
  bool wait_closed(int timeout_ms = 5000);
  // The comments (": ...") seen so far.
  const std::vector<std::string>& comments() const { return comments_; }
  // The body's chunks read so far (the final one left out): the server's writes.
  std::size_t chunks() const { return chunks_; }

 private:
  explicit SseClient(int fd) : fd_(fd) {}
  bool fill(int timeout_ms);
  // Moves complete chunks from raw_ to text_; false when the final chunk came.
  bool dechunk();
  std::optional<SseEvent> parse_event();

  int fd_ = -1;
  int status_ = 0;
  Headers headers_;
  bool chunked_ = false;
  bool ended_ = false;
  // Read from offsets, and cut from the front only now and then: a reader of megabytes of
  // events must not copy the rest of its buffer for each one.
  std::string raw_;  // bytes after the head, not yet de-chunked (from raw_pos_)
  std::size_t raw_pos_ = 0;
  std::string text_;  // the event stream's text (from text_pos_)
  std::size_t text_pos_ = 0;
  std::vector<std::string> comments_;
  std::size_t chunks_ = 0;
};

}  // namespace holdfast::testing
