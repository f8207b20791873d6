// HttpConnection: an HTTP/1.1 keep-alive client connection in the harness's event loop, just
// enough for a JSON API: POST/GET requests queued until the loop's flush point, responses
// framed by Content-Length or chunked transfer coding and handed over in order.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "byte_buffer.h"
#include "event_loop.h"

namespace holdfast::bench {

class HttpConnection final : private IoHandler, private Flushable {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // One per request, in request order. `body` is valid only during the call.
    virtual void on_response(int status, std::string_view body) = 0;
    // The connection broke; no more responses will come.
    virtual void on_failure(std::string_view why) = 0;
  };

  // Takes ownership of `fd` (connected, non-blocking).
  HttpConnection(EventLoop& loop, int fd, std::uint16_t port, Listener* listener);
  ~HttpConnection() override;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  void post(std::string_view path, std::string_view json_body);
  bool healthy() const { return fd_ >= 0; }

 private:
  void on_io(std::uint32_t events) override;
  void flush() override;
  // Parses one response at the front of in_; returns false when it is not complete yet.
  bool parse_one();
  void fail(std::string_view why);

  EventLoop& loop_;
  int fd_;
  std::string host_header_;
  Listener* listener_;
  ByteBuffer in_;
  ByteBuffer out_;
  std::string chunked_body_;
  std::size_t outstanding_ = 0;
  bool want_write_ = false;
};

}  // namespace holdfast::bench
