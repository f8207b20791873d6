#include "support/resp_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace holdfast::testing {

const RespValue* RespValue::get(std::string_view name) const {
  if (type != Type::kMap && type != Type::kArray) return nullptr;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2)
    if (items[i].str == name) return &items[i + 1];
  return nullptr;
}

std::string RespValue::text(std::string_view name) const {
  const RespValue* v = get(name);
  return v == nullptr ? "" : v->str;
}

std::int64_t RespValue::number(std::string_view name) const {
  const RespValue* v = get(name);
  return v == nullptr ? 0 : v->integer;
}

std::string RespValue::debug() const {
  switch (type) {
    case Type::kSimple:
      return "+" + str;
    case Type::kError:
      return "-" + str;
    case Type::kInteger:
      return ":" + std::to_string(integer);
    case Type::kBulk:
      return "\"" + str + "\"";
    case Type::kNull:
      return "(nil)";
    case Type::kBool:
      return integer ? "#t" : "#f";
    case Type::kDouble:
      return "," + str;
    case Type::kArray:
    case Type::kPush:
    case Type::kMap: {
      std::string s = type == Type::kMap ? "{" : type == Type::kPush ? ">[" : "[";
      for (std::size_t i = 0; i < items.size(); ++i) s += (i ? " " : "") + items[i].debug();
      return s + (type == Type::kMap ? "}" : "]");
    }
  }
  return "?";
}

RespClient RespClient::tcp(int port, int receive_buffer) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    throw std::runtime_error("connect to port " + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return RespClient(fd);
}

RespClient RespClient::unix_socket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    throw std::runtime_error("connect to " + path + ": " + std::strerror(errno));
  }
  return RespClient(fd);
}

RespClient::RespClient(RespClient&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) {
  o.fd_ = -1;
}

RespClient& RespClient::operator=(RespClient&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    buf_ = std::move(o.buf_);
    o.fd_ = -1;
  }
  return *this;
}

RespClient::~RespClient() {
  if (fd_ >= 0) close(fd_);
}

std::string RespClient::encode(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

void RespClient::send_raw(std::string_view bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    off += static_cast<std::size_t>(n);
  }
}

void RespClient::send(const std::vector<std::string>& args) { send_raw(encode(args)); }

RespValue RespClient::call(const std::vector<std::string>& args, int timeout_ms) {
  send(args);
  return read(timeout_ms);
}

bool RespClient::fill(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  int r = poll(&p, 1, timeout_ms);
  if (r <= 0) return false;
  char tmp[65536];
  ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
  if (n <= 0) throw std::runtime_error("connection closed by server");
  buf_.append(tmp, static_cast<std::size_t>(n));
  return true;
}

// Parses one value at *pos; false when more bytes are needed.
bool RespClient::parse(std::size_t* pos, RespValue* out) {
  auto line_end = buf_.find("\r\n", *pos);
  if (line_end == std::string::npos || *pos >= buf_.size()) return false;
  char t = buf_[*pos];
  std::string line = buf_.substr(*pos + 1, line_end - *pos - 1);
  std::size_t next = line_end + 2;
  switch (t) {
    case '+':
      out->type = RespValue::Type::kSimple;
      out->str = line;
      break;
    case '-':
      out->type = RespValue::Type::kError;
      out->str = line;
      break;
    case ':':
      out->type = RespValue::Type::kInteger;
      out->integer = std::stoll(line);
      break;
    case '_':
      out->type = RespValue::Type::kNull;
      break;
    case '#':
      out->type = RespValue::Type::kBool;
      out->integer = line == "t";
      break;
    case ',':
      out->type = RespValue::Type::kDouble;
      out->str = line;
      break;
    case '$':
    case '=': {  // a verbatim string reads as a bulk string without its "txt:" format
      long long len = std::stoll(line);
      if (len < 0) {
        out->type = RespValue::Type::kNull;
        break;
      }
      if (buf_.size() < next + static_cast<std::size_t>(len) + 2) return false;
      out->type = RespValue::Type::kBulk;
      out->str = buf_.substr(next, static_cast<std::size_t>(len));
      if (t == '=') out->str.erase(0, 4);
      next += static_cast<std::size_t>(len) + 2;
      break;
    }
    case '*':
    case '~':  // a set reads as an array
    case '>':  // a push: an array told apart by its type
    case '%': {
      long long n = std::stoll(line);
      if (n < 0) {
        out->type = RespValue::Type::kNull;
        break;
      }
      out->type = t == '%'   ? RespValue::Type::kMap
                  : t == '>' ? RespValue::Type::kPush
                             : RespValue::Type::kArray;
      std::size_t count = static_cast<std::size_t>(n) * (t == '%' ? 2 : 1);
      out->items.resize(count);
      for (std::size_t i = 0; i < count; ++i)
        if (!parse(&next, &out->items[i])) return false;
      break;
    }
    default:
      throw std::runtime_error("bad reply type byte '" + std::string(1, t) + "'");
  }
  *pos = next;
  return true;
}

RespValue RespClient::read(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::size_t pos = 0;
    RespValue v;
    if (!buf_.empty() && parse(&pos, &v)) {
      buf_.erase(0, pos);
      return v;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) throw std::runtime_error("timed out waiting for a reply");
    fill(static_cast<int>(left));
  }
}

bool RespClient::wait_closed(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  try {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return false;
      fill(static_cast<int>(left));
    }
  } catch (const std::runtime_error&) {
    return true;
  }
}

}  // namespace holdfast::testing
