// Loopback socket helpers for the harness: free ports for the servers it starts, and client
// sockets in the form the event loop wants (non-blocking, Nagle off).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace holdfast::bench {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it back, close).
// Another process can take it before the server binds it; the server then fails to start and
// the harness reports that, which is rare enough on a test machine.
std::uint16_t free_loopback_port();

// Connects to 127.0.0.1:port, waiting at most timeout_ms. Returns a non-blocking socket with
// TCP_NODELAY set, or -1 (errno tells why).
int connect_loopback(std::uint16_t port, int timeout_ms);

// Blocking helpers used before a measurement starts (server readiness, setup commands).
// Both return false on error or after timeout_ms.
bool send_all(int fd, std::string_view data, int timeout_ms);
bool recv_some(int fd, std::string& into, int timeout_ms);

}  // namespace holdfast::bench
