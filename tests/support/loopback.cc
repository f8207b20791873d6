#include "support/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace holdfast::testing {

int tcp_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string read_until_closed(int fd) {
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

std::size_t occurrences(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::optional<std::size_t> unread_by_server(int server_port, int client_fd) {
  sockaddr_in local{};
  socklen_t len = sizeof local;
  if (::getsockname(client_fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return std::nullopt;
  // Ports in /proc/net/tcp are hex. The bytes are in two places: the server socket's receive
  // queue, and what the client's socket has not yet handed over (its send queue).
  char server_end[8], client_end[8];
  std::snprintf(server_end, sizeof server_end, ":%04X", server_port);
  std::snprintf(client_end, sizeof client_end, ":%04X", ntohs(local.sin_port));
  std::optional<std::size_t> received, unsent;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the heading
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local_address, remote_address, state, queues;
    fields >> slot >> local_address >> remote_address >> state >> queues;
    const std::size_t colon = queues.find(':');
    if (colon == std::string::npos) continue;
    if (local_address.ends_with(server_end) && remote_address.ends_with(client_end))
      received = std::stoul(queues.substr(colon + 1), nullptr, 16);  // rx_queue
    if (local_address.ends_with(client_end) && remote_address.ends_with(server_end))
      unsent = std::stoul(queues.substr(0, colon), nullptr, 16);  // tx_queue
  }
  if (!received || !unsent) return std::nullopt;
  return *received + *unsent;
}

bool await_unread_by_server(int server_port, int client_fd, std::size_t low, std::size_t high) {
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto unread = unread_by_server(server_port, client_fd);
    if (unread && *unread >= low && *unread <= high) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace holdfast::testing
