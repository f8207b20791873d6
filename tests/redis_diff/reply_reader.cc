#include "reply_reader.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "support/resp_client.h"

namespace holdfast::testing {
namespace {

// Bytes as a readable, unambiguous string: printable ASCII as it is, the rest as \xNN.
std::string escaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& items, bool sort_pairs) {
  std::vector<std::string> parts;
  if (sort_pairs) {
    for (std::size_t i = 0; i + 1 < items.size(); i += 2)
      parts.push_back(items[i] + "=" + items[i + 1]);
    std::sort(parts.begin(), parts.end());
  } else {
    parts = items;
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

ReplyReader::ReplyReader(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw std::runtime_error("cannot connect to port " + std::to_string(port));
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

ReplyReader::~ReplyReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ReplyReader::call(const std::vector<std::string>& args, bool pairs) {
  const std::string request = RespClient::encode(args);
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    sent += static_cast<std::size_t>(n);
  }
  std::string reply = read_reply(pairs);
  buf_.erase(0, pos_);
  pos_ = 0;
  return reply;
}

char ReplyReader::next() {
  while (pos_ >= buf_.size()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) throw std::runtime_error("no reply within 10 s");
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) throw std::runtime_error("the server closed the connection");
    buf_.append(chunk, static_cast<std::size_t>(n));
  }
  return buf_[pos_++];
}

std::string ReplyReader::line() {
  std::string out;
  for (char c = next(); c != '\r'; c = next()) out.push_back(c);
  if (next() != '\n') throw std::runtime_error("a reply line without its LF");
  return out;
}

std::string ReplyReader::bytes(std::size_t n) {
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(next());
  if (next() != '\r' || next() != '\n') throw std::runtime_error("a bulk string without CRLF");
  return out;
}

std::string ReplyReader::read_reply(bool pairs) {
  const char type = next();
  const std::string head = line();
  switch (type) {
    case '+':
      return "+" + head;
    case '-':
      return "-" + head;
    case ':':
      return ":" + head;
    case ',':
      return "," + head;  // a RESP3 double, as the server printed it
    case '#':
      return "#" + head;
    case '_':
      return "_";
    case '$':
    case '=': {
      const long long n = std::stoll(head);
      if (n < 0) return "$nil";
      return std::string(type == '$' ? "$" : "=") + escaped(bytes(static_cast<std::size_t>(n)));
    }
    case '*':
    case '~':
    case '%': {
      const long long n = std::stoll(head);
      if (n < 0) return "*nil";
      const std::size_t count = static_cast<std::size_t>(type == '%' ? 2 * n : n);
      std::vector<std::string> items;
      for (std::size_t i = 0; i < count; ++i) items.push_back(read_reply(false));
      if (type == '%') return "%{" + joined(items, true) + "}";
      return std::string(1, type) + "[" + joined(items, pairs) + "]";
    }
    default:
      throw std::runtime_error(std::string("an unknown reply type '") + type + "'");
  }
}

}  // namespace holdfast::testing
