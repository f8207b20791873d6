#include "support/sse_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <strings.h>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

int left_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

SseClient SseClient::open(int port, const std::string& target, const Headers& headers,
                          int receive_buffer, const std::string& method) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    throw std::runtime_error("connect to port " + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  SseClient c(fd);
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [name, value] : headers) req += name + ": " + value + "\r\n";
  req += "\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
    throw std::runtime_error("send failed");
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  std::size_t end;
  while ((end = c.raw_.find("\r\n\r\n")) == std::string::npos) {
    if (!c.fill(left_ms(deadline))) throw std::runtime_error("no response head");
  }
  const std::string head = c.raw_.substr(0, end);
  c.raw_.erase(0, end + 4);
  std::size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  c.status_ = std::stoi(status_line.substr(status_line.find(' ') + 1, 3));
  while (line_end != std::string::npos && line_end < head.size()) {
    const std::size_t next = head.find("\r\n", line_end + 2);
    const std::string line = head.substr(
        line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      c.headers_.emplace_back(line.substr(0, colon), value);
    }
    line_end = next;
  }
  c.chunked_ = strcasecmp(c.header("Transfer-Encoding").c_str(), "chunked") == 0;
  return c;
}

SseClient::SseClient(SseClient&& other) noexcept
    : fd_(other.fd_),
      status_(other.status_),
      headers_(std::move(other.headers_)),
      chunked_(other.chunked_),
      ended_(other.ended_),
      raw_(std::move(other.raw_)),
      text_(std::move(other.text_)),
      comments_(std::move(other.comments_)),
      chunks_(other.chunks_) {
  other.fd_ = -1;
}

SseClient::~SseClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string SseClient::header(const std::string& name) const {
  for (const auto& [n, v] : headers_)
    if (strcasecmp(n.c_str(), name.c_str()) == 0) return v;
  return "";
}

bool SseClient::fill(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  char buf[65536];
  const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
  if (n <= 0) {
    ended_ = true;
    return false;
  }
  raw_.append(buf, static_cast<std::size_t>(n));
  return true;
}

bool SseClient::dechunk() {
  if (!chunked_) {
    text_.append(raw_, raw_pos_);
    raw_.clear();
    raw_pos_ = 0;
    return true;
  }
  for (;;) {
    const std::size_t line_end = raw_.find("\r\n", raw_pos_);
    if (line_end == std::string::npos) break;
    const std::size_t size = std::stoul(raw_.substr(raw_pos_, line_end - raw_pos_), nullptr, 16);
    if (size == 0) {
      ended_ = true;
      return false;
    }
    if (raw_.size() < line_end + 2 + size + 2) break;
    text_.append(raw_, line_end + 2, size);
    raw_pos_ = line_end + 2 + size + 2;
    ++chunks_;
  }
  if (raw_pos_ > 0 && raw_pos_ * 2 > raw_.size()) {
    raw_.erase(0, raw_pos_);
    raw_pos_ = 0;
  }
  return true;
}

std::optional<SseEvent> SseClient::parse_event() {
  for (;;) {
    const std::size_t end = text_.find("\n\n", text_pos_);
    if (end == std::string::npos) {
      text_.erase(0, text_pos_);
      text_pos_ = 0;
      return std::nullopt;
    }
    const std::string block = text_.substr(text_pos_, end - text_pos_);
    text_pos_ = end + 2;
    SseEvent e;
    e.event = "message";
    bool any = false;
    std::size_t at = 0;
    while (at <= block.size()) {
      std::size_t nl = block.find('\n', at);
      if (nl == std::string::npos) nl = block.size();
      const std::string line = block.substr(at, nl - at);
      at = nl + 1;
      if (line.empty()) continue;
      if (line[0] == ':') {
        comments_.push_back(line);
        continue;
      }
      const std::size_t colon = line.find(':');
      const std::string field = line.substr(0, colon);
      std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
      if (field == "id") {
        e.id = value;
      } else if (field == "event") {
        e.event = value;
        any = true;
      } else if (field == "data") {
        if (!e.data.empty()) e.data += "\n";
        e.data += value;
        any = true;
      }
    }
    if (any) return e;
  }
}

std::optional<SseEvent> SseClient::next_within(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    dechunk();
    if (auto e = parse_event()) return e;
    if (ended_) throw std::runtime_error("the event stream ended");
    if (!fill(left_ms(deadline))) {
      if (ended_) throw std::runtime_error("the event stream ended");
      return std::nullopt;
    }
  }
}

SseEvent SseClient::next(int timeout_ms) {
  auto e = next_within(timeout_ms);
  if (!e) throw std::runtime_error("no event within " + std::to_string(timeout_ms) + " ms");
  return *e;
}

std::string SseClient::body(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string length = header("Content-Length");
  const std::size_t want = length.empty() ? 0 : std::stoul(length);
  while (raw_.size() - raw_pos_ < want)
    if (!fill(left_ms(deadline))) throw std::runtime_error("short body");
  return raw_.substr(raw_pos_, want);
}

bool SseClient::wait_closed(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!ended_) {
    if (left_ms(deadline) == 0) return false;
    if (!fill(left_ms(deadline)) && !ended_ && left_ms(deadline) == 0) return false;
    raw_.clear();
    raw_pos_ = 0;
  }
  return true;
}

}  // namespace holdfast::testing
