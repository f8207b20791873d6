// holdfast-lock-floor: the least a lock server can do for holdfast-bench, as a yardstick for the
// per-core goals (docs/performance.md, "Why the last speed goals are not met").
//
// It answers the bench's pairs (LOCK.TRY, LOCK.RELEASE) and PING with Holdfast's reply bytes
// from an open-addressing table: no leases, no log, no rules, no metrics beyond two counters, no
// sessions. Lock events for LOCK.WATCH and GET /v1/events carry only the fields the contract
// requires, are written once per batch for every watcher alike, and leave in one send per
// watcher every 10 ms or 256 KiB, as Holdfast's do. One thread, level-triggered epoll, one recv
// and one send per readable socket, a blocking wait: no polling.
//
// holdfast-bench starts it in Holdfast's place: `holdfast-bench --holdfast holdfast-lock-floor
// --targets holdfast-never,redis ...`. What any real lock server costs the machine is more.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kSlots = 1 << 16, kMaxFd = 1 << 16, kBatchBytes = 256 * 1024, kBacklogMax = 4 << 20 };
static const int64_t kBatchNs = 10 * 1000 * 1000;
static const char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

struct slot {
  char key[48];
  uint8_t len;
  uint64_t handle;
};
static struct slot table[kSlots];
static uint64_t next_handle = 1;

enum kind { kFree, kResp, kWatch, kHttp, kStream };
struct conn {
  enum kind kind;
  char* backlog;  // a watcher's bytes the socket did not take
  size_t backlog_len;
};
static struct conn conns[kMaxFd];

// The batch of events not yet sent: one text per format, shared by every watcher of it.
static char* batch_resp;
static size_t batch_resp_len;
static char* batch_sse;
static size_t batch_sse_len;
static int64_t batch_since;  // when its first event was made; 0: empty
static int watches, streams;
static uint64_t events_total, dropped_total, last_id;
static int ep;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static int64_t wall_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint64_t hash(const char* s, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}
static struct slot* find(const char* k, int n, int create) {
  if (n > (int)sizeof table[0].key) return NULL;
  for (uint64_t i = hash(k, n) & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
    struct slot* s = &table[i];
    if (s->len == n && memcmp(s->key, k, n) == 0) return s;
    if (s->len == 0) {
      if (!create) return NULL;
      memcpy(s->key, k, n);
      s->len = (uint8_t)n;
      return s;
    }
  }
}

static char* put(char* o, const char* s) {
  size_t n = strlen(s);
  memcpy(o, s, n);
  return o + n;
}
static char* bulk(char* o, const char* s, int n) {
  o += sprintf(o, "$%d\r\n", n);
  memcpy(o, s, n);
  o += n;
  return put(o, "\r\n");
}
static void encode(uint64_t h, char* out) {
  for (int i = 25; i >= 0; i--) {
    out[i] = kAlphabet[h & 31];
    h >>= 5;
  }
}
static uint64_t decode(const char* s, int n) {
  uint64_t h = 0;
  for (int i = 0; i < n; i++) {
    const char* p = memchr(kAlphabet, s[i], 32);
    h = (h << 5) | (p ? (uint64_t)(p - kAlphabet) : 0);
  }
  return h;
}

// A batch is sent once it holds kBatchBytes, so it never needs more than this.
static char* batch_buffer(char** buf) {
  if (*buf == NULL) *buf = malloc(kBatchBytes + 4096);
  return *buf;
}

// The watchers, so that sending a batch visits only them.
static int watcher_fds[kMaxFd];
static int watcher_count;
static void add_watcher(int fd, enum kind kind) {
  conns[fd].kind = kind;
  watcher_fds[watcher_count++] = fd;
  if (kind == kWatch) ++watches;
  if (kind == kStream) ++streams;
}

static void flush_batch(void);

// Writes `v` in decimal at `o`; returns the end.
static char* number(char* o, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *o++ = tmp[--n];
  return o;
}
static char* text(char* o, const char* s, size_t n) {
  memcpy(o, s, n);
  return o + n;
}

// An event with the fields every event must have (docs/events.md) and no others, written once
// per format for every watcher of it. The bench's keys need no JSON escaping.
static void event(const char* name, const char* key, int key_len, uint64_t token, int64_t lease) {
  if (watches + streams == 0) return;
  char json[256];
  char* j = json;
  j = text(j, "{\"id\":", 6);
  j = number(j, ++last_id);
  j = text(j, ",\"event\":\"", 10);
  j = text(j, name, strlen(name));
  j = text(j, "\",\"key\":\"", 9);
  j = text(j, key, (size_t)key_len);
  j = text(j, "\",\"token\":", 10);
  j = number(j, token);
  j = text(j, ",\"heldBy\":\"user:local\",\"leaseExpiresAt\":", 40);
  j = number(j, (uint64_t)lease);
  j = text(j, ",\"at\":", 6);
  j = number(j, (uint64_t)wall_ms());
  *j++ = '}';
  const size_t n = (size_t)(j - json);
  ++events_total;
  if (batch_since == 0) batch_since = now_ns();
  if (watches > 0) {
    char* o = batch_buffer(&batch_resp) + batch_resp_len;
    o = text(o, "*3\r\n$10\r\nlock.event\r\n", 21);
    o = bulk(o, name, (int)strlen(name));
    o = bulk(o, json, (int)n);
    batch_resp_len = (size_t)(o - batch_resp);
  }
  if (streams > 0) {
    char* o = batch_buffer(&batch_sse) + batch_sse_len;
    o = text(o, "id: ", 4);
    o = number(o, last_id);
    o = text(o, "\nevent: ", 8);
    o = text(o, name, strlen(name));
    o = text(o, "\ndata: ", 7);
    o = text(o, json, n);
    o = text(o, "\n\n", 2);
    batch_sse_len = (size_t)(o - batch_sse);
  }
  if (batch_resp_len >= kBatchBytes || batch_sse_len >= kBatchBytes) flush_batch();
}

static void drop(int fd) {
  if (conns[fd].kind == kWatch) --watches;
  if (conns[fd].kind == kStream) --streams;
  for (int i = 0; i < watcher_count; i++)
    if (watcher_fds[i] == fd) watcher_fds[i--] = watcher_fds[--watcher_count];
  free(conns[fd].backlog);
  conns[fd] = (struct conn){0};
  close(fd);
}

// Sends to a watcher what waits for it and then `data`; one that falls 4 MiB behind is closed.
static void send_watcher(int fd, const char* data, size_t len) {
  struct conn* c = &conns[fd];
  if (c->backlog_len > 0) {
    ssize_t m = send(fd, c->backlog, c->backlog_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (m > 0) {
      memmove(c->backlog, c->backlog + m, c->backlog_len - (size_t)m);
      c->backlog_len -= (size_t)m;
    }
  }
  size_t sent = 0;
  if (c->backlog_len == 0) {
    ssize_t m = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (m > 0) sent = (size_t)m;
  }
  if (sent == len) return;
  if (c->backlog_len + (len - sent) > kBacklogMax) {
    ++dropped_total;
    drop(fd);
    return;
  }
  if (c->backlog == NULL) c->backlog = malloc(kBacklogMax);
  memcpy(c->backlog + c->backlog_len, data + sent, len - sent);
  c->backlog_len += len - sent;
}

static void flush_batch(void) {
  if (batch_since == 0) return;
  char head[32];
  const int head_len = sprintf(head, "%zx\r\n", batch_sse_len);
  for (int i = watcher_count - 1; i >= 0; i--) {  // from the end: a watcher may be dropped
    const int fd = watcher_fds[i];
    if (conns[fd].kind == kWatch && batch_resp_len > 0) {
      send_watcher(fd, batch_resp, batch_resp_len);
    } else if (conns[fd].kind == kStream && batch_sse_len > 0) {
      // A chunk of the response: its size line, the events, its end.
      send_watcher(fd, head, (size_t)head_len);
      if (conns[fd].kind == kStream) send_watcher(fd, batch_sse, batch_sse_len);
      if (conns[fd].kind == kStream) send_watcher(fd, "\r\n", 2);
    }
  }
  batch_resp_len = batch_sse_len = 0;
  batch_since = 0;
}

// One RESP request from in[0..n): the bytes it took (0: incomplete); its reply goes to *o.
static int one(int fd, const char* in, int n, char** o) {
  const char *p = in, *end = in + n, *args[8] = {0};
  int lens[8] = {0};
  if (p >= end || *p != '*') return 0;
  const int argc = atoi(p + 1);
  if (!(p = memchr(p, '\n', (size_t)(end - p)))) return 0;
  p++;
  for (int i = 0; i < argc; i++) {
    if (p >= end) return 0;
    const int l = atoi(p + 1);
    if (!(p = memchr(p, '\n', (size_t)(end - p)))) return 0;
    p++;
    if (end - p < l + 2) return 0;
    if (i < 8) {
      args[i] = p;
      lens[i] = l;
    }
    p += l + 2;
  }
  char* w = *o;
  if (lens[0] == 4) {
    w = put(w, "+PONG\r\n");
  } else if (lens[0] == 10 && memcmp(args[0], "LOCK.WATCH", 10) == 0) {
    add_watcher(fd, kWatch);
    w = put(w, "*3\r\n$10\r\nlock.watch\r\n$0\r\n\r\n:1\r\n");
  } else if (lens[0] == 8 && argc >= 4) {  // LOCK.TRY key TTL ms
    struct slot* s = find(args[1], lens[1], 1);
    if (s == NULL || s->handle) {
      w = put(w, "$-1\r\n");
    } else {
      s->handle = next_handle++;
      char h[26];
      encode(s->handle, h);
      const int64_t at = wall_ms(), lease = at + atoll(args[3]);
      w = put(w, "*18\r\n$3\r\nkey\r\n");
      w = bulk(w, args[1], lens[1]);
      w = put(w, "$6\r\nhandle\r\n");
      w = bulk(w, h, 26);
      w +=
          sprintf(w,
                  "$5\r\ntoken\r\n:%llu\r\n$6\r\nheldBy\r\n$10\r\nuser:local\r\n$5\r\nowner\r\n$-"
                  "1\r\n$10\r\nacquiredAt\r\n:%lld\r\n$14\r\nleaseExpiresAt\r\n:%lld\r\n$5\r\nscope"
                  "\r\n$5\r\nlease\r\n$4\r\nkind\r\n$6\r\nhandle\r\n",
                  (unsigned long long)s->handle, (long long)at, (long long)lease);
      event("acquired", args[1], lens[1], s->handle, lease);
    }
  } else if (argc >= 3) {  // LOCK.RELEASE key handle
    struct slot* s = find(args[1], lens[1], 0);
    if (s != NULL && s->handle != 0 && s->handle == decode(args[2], lens[2])) {
      event("released", args[1], lens[1], s->handle, wall_ms());
      s->handle = 0;
      w = put(w, "*2\r\n$8\r\nreleased\r\n:1\r\n");
    } else {
      w = put(w, "*4\r\n$8\r\nreleased\r\n:0\r\n$6\r\nreason\r\n$10\r\nnot_holder\r\n");
    }
  } else {
    w = put(w, "-ERR unknown command\r\n");
  }
  *o = w;
  return (int)(p - in);
}

static void http(int fd, const char* in, ssize_t n) {
  char out[512];
  if (n >= 12 && memcmp(in, "GET /metrics", 12) == 0) {
    char body[160];
    const int b = sprintf(
        body, "# floor\nholdfast_events_total %llu\nholdfast_event_watchers_dropped_total %llu\n",
        (unsigned long long)events_total, (unsigned long long)dropped_total);
    const int h = sprintf(out,
                          "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                          "%d\r\nConnection: close\r\n\r\n%s",
                          b, body);
    send(fd, out, (size_t)h, MSG_NOSIGNAL);
    drop(fd);
  } else if (n >= 14 && memcmp(in, "GET /v1/events", 14) == 0) {
    const char head[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "Transfer-Encoding: chunked\r\n\r\n18\r\n: holdfast lock events\n\n\r\n";
    send(fd, head, sizeof head - 1, MSG_NOSIGNAL);
    add_watcher(fd, kStream);
  } else {
    const char bad[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send(fd, bad, sizeof bad - 1, MSG_NOSIGNAL);
    drop(fd);
  }
}

static int listen_on(const char* host_port) {
  const char* colon = strrchr(host_port, ':');
  if (colon == NULL) return -1;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr*)&a, sizeof a) != 0 || listen(fd, 1024) != 0) return -1;
  struct epoll_event e = {.events = EPOLLIN, .data = {.fd = fd}};
  epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
  return fd;
}

int main(int argc, char** argv) {
  const char *resp_addr = NULL, *http_addr = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--version") == 0) {
      puts("holdfast-lock-floor (a lock server that does nothing else)");
      return 0;
    }
    if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) resp_addr = argv[++i];
    if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) http_addr = argv[++i];
  }
  if (resp_addr == NULL) {
    fprintf(stderr, "usage: holdfast-lock-floor --listen 127.0.0.1:PORT [--http 127.0.0.1:PORT]\n");
    return 2;
  }
  ep = epoll_create1(0);
  const int resp_fd = listen_on(resp_addr);
  const int http_fd = http_addr ? listen_on(http_addr) : -1;  // -1 matches no socket
  if (resp_fd < 0 || (http_addr && http_fd < 0)) {
    perror("listen");
    return 1;
  }
  static char in[65536], out[1 << 20];
  struct epoll_event evs[256];
  for (;;) {
    int timeout = -1;
    if (batch_since != 0) {
      const int64_t left = batch_since + kBatchNs - now_ns();
      timeout = left <= 0 ? 0 : (int)(left / 1000000) + 1;
    }
    const int n = epoll_wait(ep, evs, 256, timeout);
    for (int i = 0; i < n; i++) {
      const int fd = evs[i].data.fd;
      if (fd == resp_fd || fd == http_fd) {
        int c;
        while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          const int one = 1;
          if (c >= kMaxFd) {
            close(c);
            continue;
          }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conns[c].kind = fd == resp_fd ? kResp : kHttp;
          struct epoll_event ce = {.events = EPOLLIN, .data = {.fd = c}};
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
        }
        continue;
      }
      const ssize_t m = recv(fd, in, sizeof in, 0);  // the bench's requests arrive whole
      if (m <= 0) {
        if (m == 0 || errno != EAGAIN) drop(fd);
        continue;
      }
      if (conns[fd].kind == kHttp) {
        http(fd, in, m);
        continue;
      }
      char* o = out;
      int at = 0, used;
      while (at < m && (used = one(fd, in + at, (int)m - at, &o)) > 0) at += used;
      if (o > out) send(fd, out, (size_t)(o - out), MSG_NOSIGNAL);
    }
    if (batch_since != 0 && now_ns() - batch_since >= kBatchNs) flush_batch();
  }
}
