// The two halves of a non-blocking client connection's I/O that every protocol client of the
// harness shares: sending queued output (asking the loop for EPOLLOUT only while the socket is
// full) and reading what has arrived into the input buffer.
#pragma once

#include <string>

#include "byte_buffer.h"
#include "event_loop.h"

namespace holdfast::bench {

// Sends what `out` holds until it is empty or the socket is full. While it is full, `fd` is
// watched for EPOLLOUT as well (`want_write` remembers that), and the interest is dropped once
// everything is sent. Returns false with `error` (strerror text) when the connection failed.
bool send_buffered(EventLoop& loop, IoHandler* handler, int fd, ByteBuffer& out, bool& want_write,
                   std::string& error);

// One recv into `in`. True when bytes arrived; false when there is nothing to read yet
// (`error` stays empty) or the connection failed (`error` says why: the server closed the
// connection, or strerror text).
bool recv_buffered(int fd, ByteBuffer& in, std::string& error);

}  // namespace holdfast::bench
