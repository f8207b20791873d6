// Plain TCP on loopback for tests that need the socket itself: to send bytes as they are, and
// to see how many of them the server has not read yet.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "support/eventually.h"

namespace holdfast::testing {

// A TCP connection to 127.0.0.1:port, or -1.
int tcp_connect(int port);

// Writes all of `bytes` (blocking); false if the connection failed first.
bool send_all(int fd, std::string_view bytes);

// Every byte the server sends until it closes the connection.
std::string read_until_closed(int fd);

// How often `what` occurs in `text` (to count the replies of one kind in a stream of them).
std::size_t occurrences(std::string_view text, std::string_view what);

// How many bytes the client on `client_fd` sent that the server, listening on `server_port`,
// has not read yet: in the server socket's receive queue or still in the client's send queue
// (from /proc/net/tcp). nullopt if either socket is not found.
std::optional<std::size_t> unread_by_server(int server_port, int client_fd);

// Waits until unread_by_server() is within [low, high]; false if it never is (kEventually).
bool await_unread_by_server(int server_port, int client_fd, std::size_t low, std::size_t high);

}  // namespace holdfast::testing
