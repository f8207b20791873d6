// HttpConnection: see http_client.h.
#include "http_client.h"

#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "socket_io.h"

namespace holdfast::bench {

namespace {

bool iequals_prefix(std::string_view line, std::string_view prefix) {
  return line.size() >= prefix.size() &&
         strncasecmp(line.data(), prefix.data(), prefix.size()) == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

HttpConnection::HttpConnection(EventLoop& loop, int fd, std::uint16_t port, Listener* listener)
    : loop_(loop),
      fd_(fd),
      host_header_("127.0.0.1:" + std::to_string(port)),
      listener_(listener),
      in_(65536),
      out_(8192) {
  loop_.watch(fd_, EPOLLIN, this);
}

HttpConnection::~HttpConnection() {
  loop_.forget(this);
  if (fd_ >= 0) {
    loop_.unwatch(fd_);
    close(fd_);
  }
}

void HttpConnection::post(std::string_view path, std::string_view json_body) {
  if (fd_ < 0) {
    listener_->on_failure("connection closed");
    return;
  }
  char len[24];
  auto end = std::to_chars(len, len + sizeof len, json_body.size()).ptr;
  out_.append("POST ");
  out_.append(path);
  out_.append(" HTTP/1.1\r\nHost: ");
  out_.append(host_header_);
  out_.append("\r\nContent-Type: application/json\r\nContent-Length: ");
  out_.append(std::string_view(len, static_cast<std::size_t>(end - len)));
  out_.append("\r\n\r\n");
  out_.append(json_body);
  ++outstanding_;
  loop_.mark_dirty(this);
}

void HttpConnection::flush() {
  if (fd_ < 0) return;
  std::string error;
  if (!send_buffered(loop_, this, fd_, out_, want_write_, error)) fail(error);
}

void HttpConnection::on_io(std::uint32_t events) {
  if (events & EPOLLOUT) flush();
  if (fd_ < 0 || !(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  std::string error;
  if (!recv_buffered(fd_, in_, error)) {
    if (!error.empty()) fail(error);
    return;
  }
  while (fd_ >= 0 && !in_.empty() && parse_one()) {
  }
}

bool HttpConnection::parse_one() {
  const std::string_view data = in_.view();
  const std::size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return false;
  const std::string_view head = data.substr(0, head_end);
  // "HTTP/1.1 200 OK"
  int status = 0;
  const std::size_t sp = head.find(' ');
  if (sp == std::string_view::npos ||
      std::from_chars(head.data() + sp + 1, head.data() + head.size(), status).ec != std::errc()) {
    fail("malformed HTTP status line");
    return false;
  }
  std::size_t content_length = 0;
  bool chunked = false;
  std::size_t line_start = head.find("\r\n");
  while (line_start != std::string_view::npos && line_start < head.size()) {
    line_start += 2;
    std::size_t line_end = head.find("\r\n", line_start);
    if (line_end == std::string_view::npos) line_end = head.size();
    const std::string_view line = head.substr(line_start, line_end - line_start);
    if (iequals_prefix(line, "content-length:")) {
      const std::string_view v = trim(line.substr(15));
      std::from_chars(v.data(), v.data() + v.size(), content_length);
    } else if (iequals_prefix(line, "transfer-encoding:")) {
      chunked = trim(line.substr(18)).find("chunked") != std::string_view::npos;
    }
    line_start = line_end;
  }
  const std::size_t body_start = head_end + 4;
  if (!chunked) {
    if (data.size() < body_start + content_length) return false;
    const std::string_view body = data.substr(body_start, content_length);
    if (outstanding_ > 0) --outstanding_;
    listener_->on_response(status, body);
    in_.consume(body_start + content_length);
    return true;
  }
  // Chunked: <hex size>\r\n<data>\r\n ... 0\r\n\r\n (no trailers expected from a JSON API).
  chunked_body_.clear();
  std::size_t pos = body_start;
  for (;;) {
    const std::size_t size_end = data.find("\r\n", pos);
    if (size_end == std::string_view::npos) return false;
    std::size_t chunk = 0;
    std::from_chars(data.data() + pos, data.data() + size_end, chunk, 16);
    pos = size_end + 2;
    if (chunk == 0) {
      if (data.size() < pos + 2) return false;
      pos += 2;
      break;
    }
    if (data.size() < pos + chunk + 2) return false;
    chunked_body_.append(data.substr(pos, chunk));
    pos += chunk + 2;
  }
  if (outstanding_ > 0) --outstanding_;
  listener_->on_response(status, chunked_body_);
  in_.consume(pos);
  return true;
}

void HttpConnection::fail(std::string_view why) {
  if (fd_ < 0) return;
  loop_.unwatch(fd_);
  close(fd_);
  fd_ = -1;
  outstanding_ = 0;
  listener_->on_failure(why);
}

}  // namespace holdfast::bench
