// ReadSpace (src/server/resp/read_space.h): reads into it behave as Asio's own, except that a
// read started after a short one does not try recv() before epoll reports the socket readable.
//
// The test binary counts recv() calls by defining recv itself: Asio's socket code is compiled
// into this executable, so its calls bind to this definition, which forwards to the system
// call. A binary of its own, so that no other test runs with the counter in place.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <string>

#include "server/resp/read_space.h"

namespace {
std::atomic<int> recv_calls{0};
}  // namespace

extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
  recv_calls.fetch_add(1);
  return syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr);
}

namespace holdfast::resp {
namespace {

using Socket = boost::asio::local::stream_protocol::socket;

struct Pair {
  boost::asio::io_context io;
  Socket a{io}, b{io};
  Pair() { boost::asio::local::connect_pair(a, b); }
};

// One async_read_some into `space`; `got` is -1 until it completes, then the bytes read (0 on
// an error, kept in `error`).
struct Read {
  long got = -1;
  boost::system::error_code error;
};

template <typename MakeBuffer>
void start_read(Pair& p, Read& r, char* space, std::size_t size, MakeBuffer make_buffer) {
  r = Read{};
  p.b.async_read_some(make_buffer(space, size),
                      [&r](const boost::system::error_code& ec, std::size_t n) {
                        r.error = ec;
                        r.got = ec ? 0 : static_cast<long>(n);
                      });
}

void poll(Pair& p) {
  p.io.restart();
  p.io.poll();
}

void send(Pair& p, const std::string& data) { boost::asio::write(p.a, boost::asio::buffer(data)); }

auto read_space = [](char* d, std::size_t n) { return ReadSpace(d, n); };
auto plain = [](char* d, std::size_t n) { return boost::asio::buffer(d, n); };

TEST(ReadSpace, IsASingleBufferSequenceOverTheGivenSpace) {
  char buf[8];
  ReadSpace s(buf, sizeof buf);
  EXPECT_EQ(boost::asio::buffer_size(s), sizeof buf);
  EXPECT_EQ(s.data(), buf);
  EXPECT_EQ(std::next(s.begin()), s.end());
}

#if HOLDFAST_READ_SPACE_REPORTS_DRAINED
// As on a server's connection: a read waits, a request arrives and is read (short), and the
// next read is started before the client has sent anything more.
template <typename MakeBuffer>
int recvs_of_a_read_started_on_a_drained_socket(MakeBuffer make_buffer) {
  Pair p;
  char buf[64];
  Read r;
  start_read(p, r, buf, sizeof buf, make_buffer);
  poll(p);
  EXPECT_EQ(r.got, -1);
  send(p, "PING\r\n");
  poll(p);
  EXPECT_EQ(r.got, 6);  // 6 of 64: the socket is drained
  const int before = recv_calls.load();
  start_read(p, r, buf, sizeof buf, make_buffer);
  poll(p);
  EXPECT_EQ(r.got, -1);
  const int tried = recv_calls.load() - before;
  // Data arriving now is an epoll event, and the queued read takes it.
  send(p, "PING\r\n");
  poll(p);
  EXPECT_EQ(r.got, 6);
  return tried;
}

TEST(ReadSpace, AfterAShortReadTheNextReadWaitsForEpollWithoutARecv) {
  EXPECT_EQ(recvs_of_a_read_started_on_a_drained_socket(read_space), 0);
}

TEST(ReadSpace, AsiosOwnBufferTriesARecvThereWhichIsWhatReadSpaceSaves) {
  EXPECT_EQ(recvs_of_a_read_started_on_a_drained_socket(plain), 1);
}
#endif

TEST(ReadSpace, AFullReadLeavesTheRestForTheNextRead) {
  Pair p;
  char buf[4];
  send(p, "PING\r\nPING\r\n");
  std::string seen;
  Read r;
  for (int i = 0; i < 3; ++i) {
    start_read(p, r, buf, sizeof buf, read_space);
    poll(p);
    ASSERT_EQ(r.got, 4) << "read " << i;
    seen.append(buf, 4);
  }
  EXPECT_EQ(seen, "PING\r\nPING\r\n");
}

TEST(ReadSpace, TheEndOfTheStreamIsReportedAfterAShortRead) {
  Pair p;
  char buf[64];
  Read r;
  send(p, "x");
  start_read(p, r, buf, sizeof buf, read_space);
  poll(p);
  EXPECT_EQ(r.got, 1);
  start_read(p, r, buf, sizeof buf, read_space);
  poll(p);
  EXPECT_EQ(r.got, -1);
  p.a.close();
  poll(p);
  EXPECT_EQ(r.got, 0);
  EXPECT_EQ(r.error, boost::asio::error::eof);
}

}  // namespace
}  // namespace holdfast::resp
