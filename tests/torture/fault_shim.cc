// An LD_PRELOAD library that makes the disk fail under a real server, for the torture program.
//
// It wraps the calls the log and the snapshots write and sync with (write, writev, pwrite,
// fdatasync, fsync) and acts only on regular files under $HOLDFAST_FAULT_DIR, and only while
// the control file $HOLDFAST_FAULT_CONTROL exists. Its first word says what to do:
//   write          every write fails with EIO (nothing is written)
//   sync           every fdatasync and fsync fails with EIO (the data stays in the page cache,
//                  as after a real failed sync)
//   slow-sync MS   every fdatasync and fsync first sleeps MS milliseconds, then syncs
// Without the control file every call goes straight to the C library. The file is read at most
// every 5 ms, so the hot path (sockets, and files while no fault is set) costs one clock read.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum class Mode { kNone, kFailWrite, kFailSync, kSlowSync };

struct Control {
  std::atomic<Mode> mode{Mode::kNone};
  std::atomic<long> delay_ms{0};
  std::atomic<long long> read_at_ns{-1'000'000'000};
};
Control control;

long long now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Re-reads the control file when the last read is older than 5 ms. Races between threads only
// read the same file twice.
Mode current_mode() {
  const long long now = now_ns();
  if (now - control.read_at_ns.load(std::memory_order_relaxed) < 5'000'000)
    return control.mode.load(std::memory_order_relaxed);
  control.read_at_ns.store(now, std::memory_order_relaxed);
  const char* path = std::getenv("HOLDFAST_FAULT_CONTROL");
  Mode mode = Mode::kNone;
  char text[64] = {};
  if (path != nullptr) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      const ssize_t n = ::read(fd, text, sizeof text - 1);
      ::close(fd);
      if (n > 0) text[n] = '\0';
      long delay = 0;
      if (std::strncmp(text, "write", 5) == 0) {
        mode = Mode::kFailWrite;
      } else if (std::strncmp(text, "sync", 4) == 0) {
        mode = Mode::kFailSync;
      } else if (std::sscanf(text, "slow-sync %ld", &delay) == 1 && delay > 0) {
        mode = Mode::kSlowSync;
        control.delay_ms.store(delay, std::memory_order_relaxed);
      }
    }
  }
  control.mode.store(mode, std::memory_order_relaxed);
  return mode;
}

// Whether `fd` is a regular file under $HOLDFAST_FAULT_DIR.
bool in_fault_dir(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const char* dir = std::getenv("HOLDFAST_FAULT_DIR");
  if (dir == nullptr || *dir == '\0') return false;
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[4096];
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  const std::size_t len = std::strlen(dir);
  return std::strncmp(target, dir, len) == 0 && (target[len] == '/' || target[len] == '\0');
}

bool fail_write(int fd) { return current_mode() == Mode::kFailWrite && in_fault_dir(fd); }

// True when the sync must fail; sleeps first for a slow sync.
bool fail_sync(int fd) {
  const Mode mode = current_mode();
  if (mode == Mode::kNone || mode == Mode::kFailWrite || !in_fault_dir(fd)) return false;
  if (mode == Mode::kFailSync) return true;
  const long ms = control.delay_ms.load(std::memory_order_relaxed);
  timespec pause{ms / 1000, (ms % 1000) * 1'000'000};
  while (::nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
  return false;
}

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t count) {
  static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  if (fail_write(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
  if (fail_write(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd, iov, iovcnt);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  if (fail_write(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
  if (fail_write(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count, offset);
}

int fdatasync(int fd) {
  static auto real = next<int (*)(int)>("fdatasync");
  if (fail_sync(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

int fsync(int fd) {
  static auto real = next<int (*)(int)>("fsync");
  if (fail_sync(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

}  // extern "C"
