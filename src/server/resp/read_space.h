// ReadSpace: the free end of a connection's input buffer, as the buffer an asynchronous read
// fills, with one difference from boost::asio::buffer(): a read that comes back short tells
// Asio the socket is drained, so the next read waits for epoll instead of trying recv() first.
//
// Why: Asio (1.81, Boost 1.81) starts every async_read_some with a speculative recv(). On a
// request/response connection that recv() finds nothing almost every time, since the client
// is still waiting for the reply to the request just read: one failed system call per
// command, about 5 % of the server's CPU on a busy loopback (docs/performance.md, "Rules a
// change must keep": no read that finds nothing).
// Asio's epoll reactor already has the state to skip it: an operation that reports
// "done_and_exhausted" clears the descriptor's try-speculative flag until the next readiness
// event. Its stock receive operation reports that only at end of stream; this one also does
// when recv() returned less than the space it was given, which on a stream socket (TCP or
// Unix) means the receive queue was empty. Any data that arrives afterwards is a new epoll
// event, which sets the flag again and performs the queued read. Two cases return short with
// data left, and neither arises here: a Unix socket with SO_PASSCRED set, which does not join
// writes from different senders (the listener never sets it), and TCP urgent data, at whose
// mark recv() stops (a client that sends it only delays its own connection until it sends
// again).
//
// How: an explicit specialization of Asio's receive-operation base for this buffer type. It
// depends on Asio internals of the version it was written against, so it is compiled only
// there; with any other Boost, ReadSpace is a plain single-buffer sequence and reads behave as
// Asio's own.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/version.hpp>
#include <cstddef>

namespace holdfast::resp {

class ReadSpace {
 public:
  ReadSpace(char* data, std::size_t size) : buffer_(data, size) {}

  // A MutableBufferSequence of one buffer.
  const boost::asio::mutable_buffer* begin() const { return &buffer_; }
  const boost::asio::mutable_buffer* end() const { return &buffer_ + 1; }

  char* data() const { return static_cast<char*>(buffer_.data()); }
  std::size_t size() const { return buffer_.size(); }

 private:
  boost::asio::mutable_buffer buffer_;
};

}  // namespace holdfast::resp

#if BOOST_VERSION == 108100 && !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#define HOLDFAST_READ_SPACE_REPORTS_DRAINED 1

#include <boost/asio/detail/reactive_socket_recv_op.hpp>

namespace boost::asio::detail {

// The stock reactive_socket_recv_op_base<MutableBufferSequence> with the short-read rule
// above; reactive_socket_recv_op<ReadSpace, Handler, IoExecutor> derives from it unchanged.
template <>
class reactive_socket_recv_op_base<holdfast::resp::ReadSpace> : public reactor_op {
 public:
  reactive_socket_recv_op_base(const boost::system::error_code& success_ec, socket_type socket,
                               socket_ops::state_type state,
                               const holdfast::resp::ReadSpace& buffers,
                               socket_base::message_flags flags, func_type complete_func)
      : reactor_op(success_ec, &reactive_socket_recv_op_base::do_perform, complete_func),
        socket_(socket),
        state_(state),
        buffers_(buffers),
        flags_(flags) {}

  static status do_perform(reactor_op* base) {
    auto* o = static_cast<reactive_socket_recv_op_base*>(base);
    const bool stream = (o->state_ & socket_ops::stream_oriented) != 0;
    if (!socket_ops::non_blocking_recv1(o->socket_, o->buffers_.data(), o->buffers_.size(),
                                        o->flags_, stream, o->ec_, o->bytes_transferred_)) {
      return not_done;  // would block: wait for epoll
    }
    // End of stream (0 bytes) as in Asio; and a short read: the queue was empty.
    if (stream && o->bytes_transferred_ < o->buffers_.size()) return done_and_exhausted;
    return done;
  }

 private:
  socket_type socket_;
  socket_ops::state_type state_;
  holdfast::resp::ReadSpace buffers_;
  socket_base::message_flags flags_;
};

}  // namespace boost::asio::detail

#endif
