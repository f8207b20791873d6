// The connection hub as a ClientDirectory (CLIENT LIST, CLIENT KILL, INFO clients), and the
// addresses CLIENT LIST shows.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <vector>

#include "server/resp/connection.h"

namespace holdfast::resp {
namespace {

// "127.0.0.1:5300", "[::1]:5300" as Redis prints IPv6 without brackets: "::1:5300"; a Unix
// socket's path with ":0"; "" when unknown.
std::string endpoint_text(const sockaddr* sa, std::size_t len) {
  char host[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(in6->sin6_port));
  }
  if (sa->sa_family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(sa);
    const std::size_t max =
        len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path) : 0;
    const std::string path(un->sun_path, strnlen(un->sun_path, std::min(max, sizeof un->sun_path)));
    return path.empty() ? std::string() : path + ":0";
  }
  return {};
}

}  // namespace

void describe_endpoints(boost::asio::generic::stream_protocol::socket& socket,
                        ConnectionState& state) {
  boost::system::error_code ec;
  const auto local = socket.local_endpoint(ec);
  if (!ec) state.local_address = endpoint_text(local.data(), local.size());
  const auto peer = socket.remote_endpoint(ec);
  if (!ec) state.peer_address = endpoint_text(peer.data(), peer.size());
  if (state.peer_address.empty()) state.peer_address = state.local_address;
  state.fd = socket.native_handle();
  state.opened_at = state.last_active = std::chrono::steady_clock::now();
}

void LiveClients::for_each(const std::function<void(const ConnectionState&)>& fn) const {
  std::vector<std::shared_ptr<Connection>> open;
  open.reserve(hub_.live.size());
  for (const auto& [id, weak] : hub_.live)
    if (auto c = weak.lock()) open.push_back(std::move(c));
  std::sort(open.begin(), open.end(),
            [](const auto& a, const auto& b) { return a->id() < b->id(); });
  for (const auto& c : open) {
    c->note_buffers();
    fn(c->state());
  }
}

std::size_t LiveClients::count() const { return hub_.live.size(); }

std::uint64_t LiveClients::accepted() const { return *hub_.last_id; }

bool LiveClients::kill(SessionId id) {
  auto it = hub_.live.find(id);
  if (it == hub_.live.end()) return false;
  auto c = it->second.lock();
  if (!c) return false;
  c->kill();
  return true;
}

}  // namespace holdfast::resp
