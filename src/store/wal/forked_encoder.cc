// ForkedEncoding: see forked_encoder.h.
#include "store/wal/forked_encoder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "store/wal/coding.h"

namespace holdfast::wal {

namespace {

constexpr std::uint64_t kEnd = 0x444e45464e45444eULL;  // marks a complete stream
// The child sends the holds in pieces of about this size (the parent holds one at a time).
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;
// A header or a piece longer than this is damage, not part of a snapshot.
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 30;

Error encoder_error(std::string what) {
  return Error(ErrorCode::kInternal, "snapshot encoder child: " + std::move(what));
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The second pass: encodes the holds and sends them a piece at a time.
class PipeSink final : public StateSink {
 public:
  explicit PipeSink(int fd) : fd_(fd) {}
  void last_token(std::uint64_t) override {}  // in the head, from the first pass
  void rule_set(const RuleSetPut&) override {}
  void expect_holds(std::size_t) override {}
  void hold(const HoldView& hold) override {
    encoder_.hold(hold);
    if (encoder_.pending_bytes() >= kPieceBytes) send_piece();
  }
  void value(std::string_view key, const Value& value, Millis expires_at) override {
    encoder_.value(key, value, expires_at);
    if (encoder_.pending_bytes() >= kPieceBytes) send_piece();
  }
  // Sends what is left; the numbers of holds and values sent, or none if the pipe failed.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> finish() {
    send_piece();
    if (!ok_) return std::nullopt;
    const EncodedState sent = encoder_.take();
    return std::pair{sent.hold_count, sent.value_count};
  }

 private:
  void send_piece() {
    encoder_.drain_holds(piece_);
    if (!ok_ || piece_.empty()) return;
    std::string length;
    put_u64(length, piece_.size());
    ok_ = write_all(fd_, length) && write_all(fd_, piece_);
  }

  int fd_;
  bool ok_ = true;
  SnapshotEncoder encoder_;
  std::string piece_;
};

// Writes the stream; false if the pipe failed or the two passes disagree. Two passes over the
// (frozen) table, so that the child never holds more than one piece of the encoded holds: the
// head names the hold count before the holds.
bool encode_to(int fd, const StateSource& source, std::uint64_t last_token) {
  SnapshotCounter counter;
  source(counter);
  counter.last_token(last_token);
  const EncodedState head = counter.take();
  std::string meta;
  put_u64(meta, head.last_token);
  put_u64(meta, head.hold_count);
  put_u64(meta, head.value_count);
  put_u8(meta, head.rule_set ? 1 : 0);
  if (head.rule_set) {
    put_str(meta, head.rule_set->name);
    put_str(meta, head.rule_set->toml);
  }
  std::string framed;
  put_u64(framed, meta.size());
  framed += meta;
  if (!write_all(fd, framed)) return false;
  PipeSink holds(fd);
  source(holds);
  const auto sent = holds.finish();
  if (!sent || sent->first != head.hold_count || sent->second != head.value_count) return false;
  std::string end;
  put_u64(end, 0);  // the empty piece
  put_u64(end, kEnd);
  return write_all(fd, end);
}

// Runs in the child only, and never returns: an exception let out of here would go on running
// the server's own code in a second process.
[[noreturn]] void child_main(int fd, const StateSource& source, std::uint64_t last_token,
                             pid_t parent) {
  // Die with the thread that forked it (the server's loop): a child left encoding after a
  // kill -9 would only compete with the restarted server for CPU and memory. Checked again
  // after the prctl, in case the parent died before it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(3);
  // Let go of every descriptor but stdio and the pipe: above all the data dir's lock, which
  // would otherwise keep a server restarted right after a kill -9 out until this child ends.
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  int status = 2;
  try {
    status = encode_to(fd, source, last_token) ? 0 : 1;
  } catch (...) {  // bad_alloc, most likely: the parent skips this snapshot
  }
  // _exit: no destructors, atexit handlers or stdio flushes of what is the parent's state.
  ::_exit(status);
}

// Reads exactly `size` bytes; false at end of stream or on an error (errno set, or 0).
bool read_exact(int fd, char* out, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = 0;
      return false;
    }
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Why a read_exact() failed.
std::string read_failure() {
  return errno != 0 ? std::string("read: ") + std::strerror(errno) : "the stream ended early";
}

bool read_u64(int fd, std::uint64_t& v) {
  char b[8];
  if (!read_exact(fd, b, sizeof b)) return false;
  v = load_u64(b);
  return true;
}

}  // namespace

Result<ForkedEncoding> ForkedEncoding::start(const StateSource& source, std::uint64_t last_token) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return encoder_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return encoder_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], source, last_token, parent);
  }
  ::close(fds[1]);
  return ForkedEncoding(fds[0], pid);
}

ForkedEncoding::ForkedEncoding(ForkedEncoding&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      pid_(std::exchange(other.pid_, -1)),
      failed_(other.failed_),
      holds_done_(other.holds_done_),
      buffer_(std::move(other.buffer_)) {}

ForkedEncoding& ForkedEncoding::operator=(ForkedEncoding&& other) noexcept {
  if (this != &other) {
    abandon();
    fd_ = std::exchange(other.fd_, -1);
    pid_ = std::exchange(other.pid_, -1);
    failed_ = other.failed_;
    holds_done_ = other.holds_done_;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

ForkedEncoding::~ForkedEncoding() { abandon(); }

void ForkedEncoding::abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

Status ForkedEncoding::reap() {
  int status = 0;
  pid_t reaped;
  while ((reaped = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (reaped < 0) return encoder_error(std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok_status();
  return encoder_error(WIFSIGNALED(status)
                           ? "killed by signal " + std::to_string(WTERMSIG(status))
                           : "exited with status " + std::to_string(WEXITSTATUS(status)));
}

Error ForkedEncoding::fail(std::string what, bool damaged) {
  failed_ = true;
  if (pid_ > 0 && damaged) ::kill(pid_, SIGKILL);  // its status would only say so
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ <= 0) return encoder_error(std::move(what));
  Status child = reap();
  if (!child && !damaged) return std::move(child).error();
  return encoder_error(std::move(what));
}

Result<EncodedState> ForkedEncoding::head() {
  if (fd_ < 0 || pid_ <= 0) return encoder_error("head() after the stream ended");
  std::uint64_t meta_len = 0;
  if (!read_u64(fd_, meta_len)) return fail(read_failure(), false);
  if (meta_len >= kMaxBytes) return fail("damaged state header", true);
  std::string meta(meta_len, '\0');
  if (!read_exact(fd_, meta.data(), meta.size())) return fail(read_failure(), false);
  EncodedState state;
  Decoder d(meta);
  state.last_token = d.u64();
  state.hold_count = d.u64();
  state.value_count = d.u64();
  if (d.u8() != 0) state.rule_set = RuleSetPut{std::string(d.str()), std::string(d.str())};
  if (!d.ok() || !d.done()) return fail("damaged state header", true);
  return state;
}

Result<std::string_view> ForkedEncoding::holds() {
  if (fd_ < 0) return encoder_error("holds() after the stream ended");
  if (holds_done_) return fail("holds() after the last piece", true);
  std::uint64_t size = 0;
  if (!read_u64(fd_, size)) return fail(read_failure(), false);
  if (size >= kMaxBytes) return fail("damaged piece of holds", true);
  if (size == 0) {
    holds_done_ = true;
    std::string().swap(buffer_);
    return std::string_view();
  }
  buffer_.resize(size);
  if (!read_exact(fd_, buffer_.data(), size)) return fail(read_failure(), false);
  return std::string_view(buffer_);
}

Status ForkedEncoding::finish() {
  if (fd_ < 0) return encoder_error("finish() after the stream ended");
  if (!holds_done_) return fail("finish() before the last piece of holds", true);
  std::uint64_t end = 0;
  if (!read_u64(fd_, end)) return fail(read_failure(), false);
  if (end != kEnd) return fail("the stream was damaged", true);
  ::close(fd_);
  fd_ = -1;
  if (Status s = reap(); !s) {
    failed_ = true;
    return s;
  }
  return ok_status();
}

}  // namespace holdfast::wal
