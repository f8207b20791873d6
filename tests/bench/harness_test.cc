// Unit tests of the benchmark harness's own machinery: if these are wrong, every figure is.
#include <gtest/gtest.h>

#include <unistd.h>
#include "clock.h"
#include "event_loop.h"
#include "histogram.h"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "measurement.h"
#include "mutex_checker.h"
#include "options.h"
#include "report.h"
#include "resp.h"
#include "suite.h"
#include "target.h"

namespace holdfast::bench {
namespace {

// Records the order in which the loop flushed it, and can mark another one as it flushes.
struct OrderedFlush final : Flushable {
  OrderedFlush(int id, std::vector<int>* log) : id(id), log(log) {}
  void flush() override {
    log->push_back(id);
    if (then != nullptr) loop->mark_dirty(then);
    then = nullptr;
  }
  int id;
  std::vector<int>* log;
  EventLoop* loop = nullptr;
  Flushable* then = nullptr;
};

TEST(EventLoop, FlushesOnceEachInTheOrderOfTheFirstMarks) {
  EventLoop loop;
  std::vector<int> order;
  // Allocated in one array, so address order (the old sort) would be 0, 1, 2, 3.
  std::vector<OrderedFlush> f;
  for (int i = 0; i < 4; ++i) f.emplace_back(i, &order);
  for (int i : {2, 0, 2, 3, 0, 1, 3}) loop.mark_dirty(&f[i]);
  loop.run_once(0);
  EXPECT_EQ(order, (std::vector<int>{2, 0, 3, 1}));
}

TEST(EventLoop, AFlushMayMarkAnotherForTheSameIterationAndAForgottenOneIsNotFlushed) {
  EventLoop loop;
  std::vector<int> order;
  std::vector<OrderedFlush> f;
  for (int i = 0; i < 3; ++i) f.emplace_back(i, &order);
  f[0].loop = &loop;
  f[0].then = &f[0];  // marks itself again while being flushed
  loop.mark_dirty(&f[0]);
  loop.mark_dirty(&f[2]);
  loop.mark_dirty(&f[1]);
  loop.forget(&f[2]);
  loop.run_once(0);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 0}));
  order.clear();
  loop.mark_dirty(&f[2]);  // forgetting cleared its mark
  loop.run_once(0);
  EXPECT_EQ(order, (std::vector<int>{2}));
}

TEST(EventLoop, WhatOneReadySocketQueuedLeavesBeforeTheNextReadySocketIsHandled) {
  // Two readable sockets in one iteration. Handling the first queues a request; it must be
  // flushed (and the after-flush hook told) before the second is handled, so that no request
  // waits for the rest of a batch of replies.
  struct Queuer final : IoHandler {
    void on_io(std::uint32_t) override {
      char c;
      (void)!read(fd, &c, 1);
      log->push_back(100 + id);
      if (out != nullptr) loop->mark_dirty(out);
    }
    int id = 0;
    int fd = -1;
    std::vector<int>* log = nullptr;
    EventLoop* loop = nullptr;
    Flushable* out = nullptr;
  };
  EventLoop loop;
  std::vector<int> order;
  OrderedFlush out0(0, &order), out1(1, &order);
  loop.set_after_flush([&](std::int64_t) { order.push_back(-1); });
  int a[2], b[2];
  ASSERT_EQ(pipe(a), 0);
  ASSERT_EQ(pipe(b), 0);
  Queuer q0, q1;
  q0.id = 0, q0.fd = a[0], q0.log = &order, q0.loop = &loop, q0.out = &out0;
  q1.id = 1, q1.fd = b[0], q1.log = &order, q1.loop = &loop, q1.out = &out1;
  loop.watch(a[0], EPOLLIN, &q0);
  loop.watch(b[0], EPOLLIN, &q1);
  ASSERT_EQ(write(a[1], "x", 1), 1);
  ASSERT_EQ(write(b[1], "x", 1), 1);
  loop.run_once(now_ns() + kNsPerSec);
  // epoll may report the two in either order; each handler's flush follows it directly.
  ASSERT_EQ(order.size(), 7u);
  const int first = order[0] - 100;
  EXPECT_EQ(order,
            (std::vector<int>{100 + first, first, -1, 100 + (1 - first), 1 - first, -1, -1}));
  loop.unwatch(a[0]);
  loop.unwatch(b[0]);
  for (int fd : {a[0], a[1], b[0], b[1]}) close(fd);
}

// Counts its firings; the loop's timers are how these tests make work come back at a known time.
struct CountingTimer final : TimerHandler {
  void on_timer(std::uint64_t) override { ++fired; }
  int fired = 0;
};

// Runs iterations until `t` has fired `n` times in all.
void run_until_fired(EventLoop& loop, const CountingTimer& t, int n) {
  while (t.fired < n) loop.run_once(now_ns() + kNsPerSec);
}

TEST(EventLoop, WithAPollWindowItPollsOnceWorkHasComeBackSoonAfterASleep) {
  EventLoop loop;
  // A window far longer than the timers below, so that a loaded machine cannot make the
  // first sleep look long.
  loop.set_idle_poll_us(1'000'000);
  CountingTimer t;
  // The window starts at 0: the loop sleeps until the timer, polling nothing.
  loop.add_timer(now_ns() + 200'000, &t, 1);
  run_until_fired(loop, t, 1);
  EXPECT_EQ(loop.polled_us(), 0);
  // That sleep ended within the window's bound, so the window grew: the next wait is polled.
  const std::int64_t before = now_ns();
  loop.add_timer(before + 2'000'000, &t, 2);
  run_until_fired(loop, t, 2);
  EXPECT_GE(now_ns() - before, 2'000'000);
  EXPECT_GT(loop.polled_us(), 0);
}

TEST(EventLoop, WithoutAPollWindowItNeverPolls) {
  EventLoop loop;
  CountingTimer t;
  for (int i = 1; i <= 3; ++i) {
    loop.add_timer(now_ns() + 200'000, &t, i);
    run_until_fired(loop, t, i);
  }
  EXPECT_EQ(loop.polled_us(), 0);
}

TEST(EventLoop, WithAPollWindowAReadySocketIsHandledWithoutAnIdleSpell) {
  struct Reader final : IoHandler {
    void on_io(std::uint32_t) override {
      char buf[16];
      got += static_cast<int>(read(fd, buf, sizeof buf));
    }
    int fd = -1;
    int got = 0;
  };
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EventLoop loop;
  loop.set_idle_poll_us(1'000'000);
  Reader r;
  r.fd = fds[0];
  loop.watch(fds[0], EPOLLIN, &r);
  // Ready before the iteration: found by the first, non-blocking look, no idle spell.
  ASSERT_EQ(write(fds[1], "ab", 2), 2);
  loop.run_once(now_ns() + kNsPerSec);
  EXPECT_EQ(r.got, 2);
  EXPECT_EQ(loop.polled_us(), 0);
  loop.unwatch(fds[0]);
  close(fds[0]);
  close(fds[1]);
}

TEST(LatencyHistogram, PercentilesOfUniformValuesAreWithinOnePercent) {
  LatencyHistogram h;
  for (std::int64_t v = 1; v <= 100'000; ++v) h.record(v * 1000);  // 1 µs .. 100 ms
  EXPECT_EQ(h.count(), 100'000u);
  EXPECT_NEAR(static_cast<double>(h.percentile(50)), 50e6, 50e6 * 0.01);
  EXPECT_NEAR(static_cast<double>(h.percentile(99)), 99e6, 99e6 * 0.01);
  EXPECT_NEAR(static_cast<double>(h.percentile(99.9)), 99.9e6, 99.9e6 * 0.01);
  EXPECT_EQ(h.percentile(100), 100'000'000);
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int v : {3, 7, 7, 200}) h.record(v);
  EXPECT_EQ(h.percentile(25), 3);
  EXPECT_EQ(h.percentile(75), 7);
  EXPECT_EQ(h.percentile(100), 200);
}

TEST(LatencyHistogram, HugeValuesDoNotOverflowTheBuckets) {
  LatencyHistogram h;
  h.record(INT64_MAX);
  h.record(-5);  // clock oddities count as zero
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.percentile(100), INT64_MAX);
  EXPECT_EQ(h.percentile(50), 0);
}

TEST(LatencyHistogram, EmptyAnswersZero) { EXPECT_EQ(LatencyHistogram().percentile(99), 0); }

TEST(RespEncoder, WritesAnArrayOfBulkStrings) {
  std::string out;
  resp::append_command(out, {"SET", "k", ""});
  EXPECT_EQ(out, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
}

TEST(RespParser, IncompleteReplyAsksForMore) {
  std::vector<resp::Token> t;
  for (std::string_view partial :
       {"", "+OK", "+OK\r", "$5\r\nhel", "*2\r\n:1\r\n", "%1\r\n+a\r\n"}) {
    EXPECT_EQ(resp::parse_reply(partial, t).status, resp::ParseStatus::kIncomplete) << partial;
  }
}

TEST(RespParser, ReadsOneReplyAndSaysHowLongItWas) {
  std::vector<resp::Token> t;
  const std::string_view two = "+OK\r\n:5\r\n";
  const auto r = resp::parse_reply(two, t);
  ASSERT_EQ(r.status, resp::ParseStatus::kComplete);
  EXPECT_EQ(r.consumed, 5u);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].type, resp::Type::kSimpleString);
  EXPECT_EQ(t[0].text, "OK");
}

TEST(RespParser, Resp2NullsAndErrors) {
  std::vector<resp::Token> t;
  ASSERT_EQ(resp::parse_reply("$-1\r\n", t).status, resp::ParseStatus::kComplete);
  EXPECT_EQ(t[0].type, resp::Type::kNull);
  ASSERT_EQ(resp::parse_reply("*-1\r\n", t).status, resp::ParseStatus::kComplete);
  EXPECT_EQ(t[0].type, resp::Type::kNull);
  ASSERT_EQ(resp::parse_reply("-LOCK_TIMEOUT key=a timeoutMs=5\r\n", t).status,
            resp::ParseStatus::kComplete);
  EXPECT_EQ(t[0].type, resp::Type::kError);
  EXPECT_EQ(t[0].text, "LOCK_TIMEOUT key=a timeoutMs=5");
}

TEST(RespParser, FindsAFieldOfAResp2FlatMapPastNestedValues) {
  std::vector<resp::Token> t;
  const std::string reply =
      "*6\r\n$3\r\nkey\r\n$1\r\nk\r\n$4\r\nlist\r\n*2\r\n:1\r\n:2\r\n$6\r\nhandle\r\n$3\r\nabc\r\n";
  ASSERT_EQ(resp::parse_reply(reply, t).status, resp::ParseStatus::kComplete);
  const auto handle = resp::field(t, "handle");
  ASSERT_TRUE(handle.has_value());
  EXPECT_EQ(handle->text, "abc");
  EXPECT_FALSE(resp::field(t, "missing").has_value());
}

TEST(RespParser, FindsAFieldOfAResp3Map) {
  std::vector<resp::Token> t;
  ASSERT_EQ(resp::parse_reply("%2\r\n+released\r\n#t\r\n+token\r\n:7\r\n", t).status,
            resp::ParseStatus::kComplete);
  const auto released = resp::field(t, "released");
  ASSERT_TRUE(released.has_value());
  EXPECT_TRUE(resp::truthy(*released));
}

TEST(RespParser, DropsALeadingAttribute) {
  std::vector<resp::Token> t;
  const auto r = resp::parse_reply("|1\r\n+ttl\r\n:3\r\n+OK\r\n", t);
  ASSERT_EQ(r.status, resp::ParseStatus::kComplete);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].text, "OK");
}

TEST(RespParser, RejectsGarbage) {
  std::vector<resp::Token> t;
  EXPECT_EQ(resp::parse_reply("hello\r\n", t).status, resp::ParseStatus::kMalformed);
  EXPECT_EQ(resp::parse_reply(":abc\r\n", t).status, resp::ParseStatus::kMalformed);
  EXPECT_EQ(resp::parse_reply("$3\r\nabcd\r\n", t).status, resp::ParseStatus::kMalformed);
}

TEST(MutexChecker, SectionsOneAfterAnotherPass) {
  MutexChecker c;
  c.queue_close(c.open(1, 100));
  c.close_queued(200);
  c.queue_close(c.open(1, 200));  // granted exactly when the previous release went out
  c.close_queued(300);
  c.queue_close(c.open(2, 150));  // another lock may overlap freely
  c.close_queued(250);
  const auto v = c.verify();
  EXPECT_EQ(v.sections, 3u);
  EXPECT_EQ(v.violations, 0u);
}

TEST(MutexChecker, TwoGrantsInOneIterationAreAViolation) {
  MutexChecker c;
  // Both grant replies arrive in the same loop iteration; both releases leave at its flush.
  c.queue_close(c.open(7, 100));
  c.queue_close(c.open(7, 110));
  c.close_queued(150);
  const auto v = c.verify();
  EXPECT_EQ(v.violations, 1u);
  EXPECT_FALSE(v.first_violation.empty());
}

TEST(MutexChecker, AGrantInsideALongSectionIsAViolation) {
  MutexChecker c;
  c.queue_close(c.open(7, 100));
  c.close_queued(1000);
  c.queue_close(c.open(7, 300));
  c.close_queued(400);
  c.queue_close(c.open(7, 500));  // still inside the first section
  c.close_queued(600);
  EXPECT_EQ(c.verify().violations, 2u);
}

// The library-shaped client sends a connection's release only when its socket is reported
// writable: another connection's send must not close it, or a grant that came before the real
// send would go unseen.
TEST(MutexChecker, ASendClosesOnlyItsOwnConnectionsReleases) {
  MutexChecker c;
  int a = 0, b = 0;
  c.queue_close(c.open(7, 100), &a);
  c.queue_close(c.open(8, 100), &b);
  c.close_sent_by(&b, 150);           // b sent; a's release still waits for its socket
  c.queue_close(c.open(7, 200), &b);  // a second grant of 7 before a's release went out
  c.close_sent_by(&b, 250);
  c.close_sent_by(&a, 300);
  const auto v = c.verify();
  EXPECT_EQ(v.sections, 3u);
  EXPECT_EQ(v.unclosed, 0u);
  EXPECT_EQ(v.violations, 1u);
}

TEST(MutexChecker, UnreleasedSectionsAreCountedNotJudged) {
  MutexChecker c;
  c.open(3, 100);
  EXPECT_EQ(c.verify().unclosed, 1u);
  EXPECT_EQ(c.verify().violations, 0u);
}

TEST(MutexChecker, ReadersShareALockAndAWriterMayNotJoinThem) {
  MutexChecker c;
  constexpr std::uint32_t kWriter = 1000;
  c.set_capacity(5, kWriter);
  c.queue_close(c.open(5, 100));  // two readers at once
  c.queue_close(c.open(5, 110));
  c.close_queued(200);
  c.queue_close(c.open(5, 200, kWriter));  // a writer after both left
  c.close_queued(300);
  EXPECT_EQ(c.verify().violations, 0u);
  c.queue_close(c.open(5, 250));  // a reader inside the writer's section
  c.close_queued(260);
  const auto v = c.verify();
  EXPECT_EQ(v.violations, 1u);
  EXPECT_NE(v.first_violation.find("1000 of 1000"), std::string::npos) << v.first_violation;
}

TEST(MutexChecker, ASemaphoreHoldsUpToItsPermits) {
  MutexChecker c;
  c.set_capacity(9, 3);
  c.queue_close(c.open(9, 100, 2));
  c.queue_close(c.open(9, 110, 1));
  c.close_queued(200);
  EXPECT_EQ(c.verify().violations, 0u) << "2 + 1 permits of 3";
  c.queue_close(c.open(9, 150, 1));  // a fourth permit while three are taken
  c.close_queued(160);
  EXPECT_EQ(c.verify().violations, 1u);
}

Measurement window(double seconds, std::uint64_t ops, std::int64_t p99_ns = 1000) {
  Measurement m;
  m.rounds = 1;
  m.seconds = seconds;
  m.ops = ops;
  m.ops_per_sec = double(ops) / seconds;
  m.windows = {{m.ops_per_sec, p99_ns}};
  return m;
}

std::vector<double> rates(const Measurement& m) {
  std::vector<double> r;
  for (const auto& w : m.windows) r.push_back(w.ops_per_sec);
  return r;
}

TEST(Accumulate, KeepsEachWindowsRateInOrderAndTheOverallRate) {
  Measurement total;
  accumulate(total, window(1, 100));
  accumulate(total, window(1, 300));
  accumulate(total, window(2, 400));
  EXPECT_EQ(total.rounds, 3);
  EXPECT_EQ(rates(total), (std::vector<double>{100, 300, 200}));
  EXPECT_DOUBLE_EQ(total.ops_per_sec, 800.0 / 4);
}

TEST(Accumulate, CpuAndPollingAddUpOverTheWindows) {
  Measurement total;
  Measurement a = window(1, 100);
  a.client_cpu_s = 0.9;
  a.client_poll_s = 0.5;
  Measurement b = window(1, 100);
  b.client_cpu_s = 0.5;
  b.client_poll_s = 0.1;
  accumulate(total, a);
  accumulate(total, b);
  EXPECT_DOUBLE_EQ(total.client_cpu_pct(), 70);
  EXPECT_DOUBLE_EQ(total.client_poll_pct(), 30);
}

TEST(Accumulate, AFailedWindowAddsNoRate) {
  Measurement total;
  accumulate(total, window(1, 100));
  Measurement failed;
  failed.failed = true;
  accumulate(total, failed);
  EXPECT_EQ(rates(total), (std::vector<double>{100}));
}

// A target whose connect() notes the thread that asked and then fails the window.
class ThreadNotingTarget final : public Target {
 public:
  std::string name() const override { return "noting"; }
  std::string description() const override { return "notes the measuring thread"; }
  void start(const std::filesystem::path&) override {}
  void stop() override {}
  pid_t server_pid() const override { return ::getpid(); }
  std::unique_ptr<LockClient> connect(EventLoop&) override {
    tids.push_back(::gettid());
    throw std::runtime_error("no server here");
  }
  std::vector<pid_t> tids;
};

TEST(Measure, EachWindowRunsOnAFreshThreadAndReportsFailure) {
  ThreadNotingTarget target;
  const MeasureShape shape{1, 1, 0, 0.1};
  const WorkerFactory none;
  for (int window = 0; window < 2; ++window) {
    const Measurement m = measure(target, "pairs", shape, none);
    EXPECT_TRUE(m.failed);
    EXPECT_EQ(m.failure, "no server here");
  }
  ASSERT_EQ(target.tids.size(), 2u);
  EXPECT_NE(target.tids[0], ::gettid()) << "a window ran on the caller's thread";
  EXPECT_NE(target.tids[0], target.tids[1]) << "two windows shared a thread";
}

TEST(WindowRatioRange, LowestAndHighestRatioOfSideBySideWindows) {
  Measurement h, p;
  for (auto [a, b] : {std::pair{120, 100}, std::pair{90, 100}, std::pair{300, 200}}) {
    accumulate(h, window(1, a));
    accumulate(p, window(1, b));
  }
  const auto r = window_ratio_range(h, p);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->low, 0.9);
  EXPECT_DOUBLE_EQ(r->high, 1.5);
}

TEST(WindowRatioRange, OfP99LatencyUsesEachWindowsOwnP99) {
  Measurement h, p;
  accumulate(h, window(1, 100, 800));
  accumulate(p, window(1, 100, 1000));
  accumulate(h, window(1, 100, 1200));
  accumulate(p, window(1, 100, 1000));
  const auto r = window_ratio_range(h, p, /*p99=*/true);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->low, 0.8);
  EXPECT_DOUBLE_EQ(r->high, 1.2);
  EXPECT_DOUBLE_EQ(window_ratio_range(h, p)->high, 1.0);  // throughput: equal in both rounds
}

TEST(WindowRatioRange, NoneUnlessBothTookTheSameRoundsOfMoreThanOne) {
  Measurement one_h, one_p, two_p, zero_p;
  accumulate(one_h, window(1, 100));
  accumulate(one_p, window(1, 100));
  EXPECT_FALSE(window_ratio_range(one_h, one_p).has_value());  // a single window: no spread
  accumulate(two_p, window(1, 100));
  accumulate(two_p, window(1, 100));
  Measurement two_h = two_p;
  accumulate(one_h, window(1, 100));
  accumulate(one_h, window(1, 100));  // three windows against two
  EXPECT_FALSE(window_ratio_range(one_h, two_p).has_value());
  accumulate(zero_p, window(1, 100));
  accumulate(zero_p, window(1, 0));
  EXPECT_FALSE(window_ratio_range(two_h, zero_p).has_value());
  EXPECT_TRUE(window_ratio_range(two_h, two_p).has_value());
}

Measurement figure(const char* workload, const char* target, int connections, double rate) {
  Measurement m;
  m.workload = workload;
  m.target = target;
  m.connections = connections;
  m.seconds = 1;
  m.ops_per_sec = rate;
  m.ops = static_cast<std::uint64_t>(rate);
  return m;
}

// Writes the report of `r` to a temporary directory and returns its markdown.
std::string report_markdown(const SuiteResults& r) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hb-report-" + std::to_string(getpid()));
  const ReportFiles files = write_report(r, dir, "t");
  std::ifstream in(files.markdown);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove_all(dir);
  return text.str();
}

TEST(Report, ARunWithNothingToChartDrawsNoChartAndCallsThatNoError) {
  SuiteResults r;
  r.options.hot_connections = 64;
  r.options.workloads = {"hotkey"};
  r.options.targets = {"holdfast-never"};
  r.measurements = {figure("hotkey", "holdfast-never", 64, 13'500)};
  const auto dir =
      std::filesystem::temp_directory_path() / ("hb-nochart-" + std::to_string(getpid()));
  const ReportFiles files = write_report(r, dir, "t");
  EXPECT_FALSE(files.charted);
  EXPECT_EQ(files.chart_error, "");
  EXPECT_FALSE(std::filesystem::exists(files.throughput_chart));
  // A run with pairs has something to draw.
  r.measurements.push_back(figure("pairs", "holdfast-never", 64, 100'000));
  EXPECT_TRUE(write_report(r, dir, "t").charted);
  std::filesystem::remove_all(dir);
}

TEST(Report, PutsTheHotKeyInSectionsPerRoundTrip) {
  SuiteResults r;
  r.options.connections = {1, 64};
  r.options.hot_connections = 64;
  r.options.workloads = {"floor", "pairs", "hotkey"};
  r.options.targets = {"holdfast-never", "redis"};
  r.measurements = {
      figure("floor", "holdfast-never", 1, 9'000),  // 18 000 round trips/s
      figure("floor", "redis", 1, 8'000),          figure("pairs", "holdfast-never", 64, 100'000),
      figure("pairs", "redis", 64, 90'000),        figure("hotkey", "holdfast-never", 64, 13'500),
      figure("hotkey", "redis", 64, 9'000)};
  const std::string text = report_markdown(r);
  EXPECT_NE(text.find("| (b) hot key: holdfast-never critical sections per PING round trip "
                      "on one connection (holdfast-never); about 1 is the ceiling | 0.75 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| (b) hot key: redis critical sections per PING round trip on one "
                      "connection (holdfast-never); about 1 is the ceiling | 0.50 |"),
            std::string::npos);
}

TEST(Report, SaysHowCloseToTheFloorEachSideAloneWouldLetHoldfastCome) {
  SuiteResults r;
  r.options.connections = {64};
  r.options.workloads = {"floor", "pairs"};
  r.options.targets = {"holdfast-never"};
  Measurement floor = figure("floor", "holdfast-never", 64, 100'000);
  floor.client_cpu_s = 0.7;  // 6 us of work per PING pair once 0.1 s of polling is left out
  floor.client_poll_s = 0.1;
  floor.server_cpu_s = 0.7;  // 7 us per PING pair
  Measurement pairs = figure("pairs", "holdfast-never", 64, 80'000);
  pairs.client_cpu_s = 0.6;  // 7.5 us of work per lock pair
  pairs.client_poll_s = 0.0;
  pairs.server_cpu_s = 0.8;  // 10 us per lock pair
  r.measurements = {floor, pairs};
  const std::string text = report_markdown(r);
  EXPECT_NE(text.find("| (a) 64 conns: never ÷ floor if the server took no time: the load "
                      "generator's CPU per PING pair ÷ per lock pair (polling left out) | "
                      "0.80 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| (a) 64 conns: never ÷ floor if the load generator took no time: "
                      "the server's CPU per PING pair ÷ per lock pair | 0.70 |"),
            std::string::npos);
}

// The Redis idiom served by Holdfast is judged against Redis on the same commands.
TEST(Report, JudgesTheRedisIdiomAgainstRedisOnTheSameCommands) {
  SuiteResults r;
  r.options.connections = {64};
  r.options.workloads = {"pairs"};
  r.options.targets = {"holdfast-never", "holdfast-redis-never", "holdfast-redis-always", "redis",
                       "redis-aof"};
  r.measurements = {figure("pairs", "holdfast-never", 64, 110'000),
                    figure("pairs", "holdfast-redis-never", 64, 95'000),
                    figure("pairs", "holdfast-redis-always", 64, 60'000),
                    figure("pairs", "redis", 64, 100'000),
                    figure("pairs", "redis-aof", 64, 37'500)};
  const std::string text = report_markdown(r);
  EXPECT_NE(
      text.find("| (a) 64 conns, the Redis idiom: never ÷ redis | 0.95 | – | ≥ 1.0 | **no** |"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("| (a) 64 conns, the Redis idiom: always ÷ redis-aof | 1.60 | – | ≥ 1.5 | yes |"),
      std::string::npos)
      << text;
}

TEST(Report, JudgesTlsAgainstTheSameServerOverPlainTcp) {
  SuiteResults r;
  r.options.connections = {64};
  r.options.tls_connections = {64};
  r.options.workloads = {"tls"};
  r.options.targets = {"holdfast-never", "holdfast-never-tls", "redis", "redis-tls"};
  r.measurements = {figure("tls", "holdfast-never", 64, 100'000),
                    figure("tls", "holdfast-never-tls", 64, 80'000),
                    figure("tls", "redis", 64, 90'000), figure("tls", "redis-tls", 64, 36'000)};
  const std::string text = report_markdown(r);
  EXPECT_NE(text.find("| (j) 64 conns: never over TLS ÷ never over TCP | 0.80 | – | ≥ 0.85 | "
                      "**no** |"),
            std::string::npos)
      << text;
  // The table: each TLS row divided by the same server over TCP; the TCP rows by nothing.
  EXPECT_NE(text.find("## (j) Pairs as in (a), over TLS and over plain TCP"), std::string::npos);
  EXPECT_NE(text.find("| redis-tls | 64 | 36,000 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 0.40× |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 0.80× |"), std::string::npos) << text;
}

// A figure of one-second windows, one per round, with `ops` in each.
Measurement figure_in_rounds(const char* workload, const char* target, int connections,
                             std::initializer_list<std::uint64_t> ops) {
  Measurement m;
  for (std::uint64_t n : ops) accumulate(m, window(1, n));
  m.workload = workload;
  m.target = target;
  m.connections = connections;
  return m;
}

// The floor goal compares two workloads: its spread comes from the rounds in which both ran.
TEST(Report, GivesTheFloorGoalTheRangeOfItsRounds) {
  SuiteResults r;
  r.options.connections = {64};
  r.options.workloads = {"floor", "pairs"};
  r.options.targets = {"holdfast-never"};
  r.measurements = {figure_in_rounds("floor", "holdfast-never", 64, {100'000, 120'000}),
                    figure_in_rounds("pairs", "holdfast-never", 64, {80'000, 114'000})};
  // 194 000 / 220 000 over both; 0.80 and 0.95 round by round.
  EXPECT_NE(report_markdown(r).find("| (a) 64 conns: never ÷ PING+PING floor | 0.88 | 0.80–0.95 |"),
            std::string::npos)
      << report_markdown(r);
}

// The sleeping client's pairs come with the range of their rounds, CPU per pair without.
TEST(Report, GivesTheSleepingClientsPairsTheRangeOfTheirRounds) {
  SuiteResults r;
  r.options.sleeping_connections = {16};
  r.options.workloads = {"sleeping"};
  r.options.targets = {"holdfast-always", "redis-aof"};
  Measurement hf = figure_in_rounds("sleeping", "holdfast-always", 16, {30'000, 28'000});
  Measurement aof = figure_in_rounds("sleeping", "redis-aof", 16, {20'000, 14'000});
  hf.server_cpu_s = 0.6;
  aof.server_cpu_s = 0.6;
  r.measurements = {hf, aof};
  const std::string text = report_markdown(r);
  // 58 000 / 34 000 over both; 1.50 and 2.00 round by round.
  EXPECT_NE(text.find("| (g) 16 conns: always ÷ redis-aof, pairs/s | 1.71× | 1.50–2.00 | ≥ 1.5× "
                      "| yes |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| (g) 16 conns: always ÷ redis-aof, server CPU per pair | 0.59× | – | "
                      "≤ 0.75× | yes |"),
            std::string::npos)
      << text;
}

// Ahead per core: 1.1× Redis's pairs with `never`, CPU per pair at most 0.75× of Redis's from 16
// connections (1.0× below), p99 no worse; the Redis idiom's rows only when it ran.
TEST(Report, HoldsTheSleepingClientsToTheEfficiencyBounds) {
  SuiteResults r;
  r.options.sleeping_connections = {8, 64};
  r.options.workloads = {"sleeping"};
  r.options.targets = {"holdfast-never", "redis", "holdfast-redis-never"};
  for (int c : {8, 64}) {
    Measurement hf = figure_in_rounds("sleeping", "holdfast-never", c, {52'000, 52'000});
    Measurement idiom = figure_in_rounds("sleeping", "holdfast-redis-never", c, {60'000, 60'000});
    Measurement redis = figure_in_rounds("sleeping", "redis", c, {50'000, 50'000});
    redis.server_cpu_s = 1.0;  // 10 µs per pair
    hf.server_cpu_s = 1.04;    // 10 µs per pair
    idiom.server_cpu_s = 0.6;  // 5 µs per pair
    hf.p99_ns = 900;
    redis.p99_ns = 1000;
    idiom.p99_ns = 1200;
    r.measurements.insert(r.measurements.end(), {hf, idiom, redis});
  }
  const std::string text = report_markdown(r);
  // A goal's row without its per-round range (the windows here carry no latencies of their own).
  auto row = [&](const std::string& goal) {
    const auto at = text.find("| " + goal + " | ");
    if (at == std::string::npos) return std::string("(no row)");
    const std::string line = text.substr(at, text.find('\n', at) - at);
    const auto value_end = line.find(" | ", goal.size() + 5);
    const auto bound_at = line.find(" | ", value_end + 3);
    return line.substr(0, value_end) + line.substr(bound_at);
  };
  EXPECT_EQ(row("(g) 8 conns: never ÷ redis, pairs/s"),
            "| (g) 8 conns: never ÷ redis, pairs/s | 1.04× | ≥ 1.1× | **no** |");
  EXPECT_EQ(row("(g) 8 conns: never ÷ redis, server CPU per pair"),
            "| (g) 8 conns: never ÷ redis, server CPU per pair | 1.00× | ≤ 1.0× | yes |");
  EXPECT_EQ(row("(g) 64 conns: never ÷ redis, server CPU per pair"),
            "| (g) 64 conns: never ÷ redis, server CPU per pair | 1.00× | ≤ 0.75× | **no** |");
  EXPECT_EQ(row("(g) 64 conns: never ÷ redis, p99"),
            "| (g) 64 conns: never ÷ redis, p99 | 0.90× | ≤ 1.0× | yes |");
  EXPECT_EQ(row("(g) 64 conns: redis-never ÷ redis, pairs/s"),
            "| (g) 64 conns: redis-never ÷ redis, pairs/s | 1.20× | ≥ 1.1× | yes |");
  EXPECT_EQ(row("(g) 64 conns: redis-never ÷ redis, server CPU per pair"),
            "| (g) 64 conns: redis-never ÷ redis, server CPU per pair | 0.50× | ≤ 0.75× | yes |");
  EXPECT_EQ(row("(g) 64 conns: redis-never ÷ redis, p99"),
            "| (g) 64 conns: redis-never ÷ redis, p99 | 1.20× | ≤ 1.0× | **no** |");
  // The idiom with `always` did not run: no rows for it.
  EXPECT_EQ(text.find("redis-always ÷"), std::string::npos) << text;
}

// The paced pair's CPU ratio comes with the range of the rounds both targets took.
TEST(Report, GivesThePacedCpuTheRangeOfItsRounds) {
  SuiteResults r;
  r.options.workloads = {"idle"};
  r.options.targets = {"holdfast-never", "redis"};
  r.options.idle.paced_windows = 2;
  IdleResult hf, redis;
  hf.target = "holdfast-never";
  redis.target = "redis";
  hf.paced_window_cpu_s = {0.02, 0.03};
  redis.paced_window_cpu_s = {0.04, 0.02};
  r.idle = {hf, redis};
  EXPECT_TRUE(paced_ratio_range(hf, redis).has_value());
  const std::string text = report_markdown(r);
  // 0.05 / 0.06 over both; 0.50 and 1.50 round by round.
  EXPECT_NE(text.find("| (h) a pair every 10 ms: never ÷ redis, server CPU | 0.83× | 0.50–1.50 | "
                      "≤ 1.0× | yes |"),
            std::string::npos)
      << text;
  redis.paced_window_cpu_s = {0.06};  // one round against two: no range
  EXPECT_FALSE(paced_ratio_range(hf, redis).has_value());
}

TEST(Options, CountListsParseOrSayWhatIsWrongWithThem) {
  std::vector<int> out;
  EXPECT_EQ(parse_counts("--connections", "1,16,,64", 1, 4096, out), "");
  EXPECT_EQ(out, (std::vector<int>{1, 16, 64}));
  const std::string connections = "--connections needs a comma list of counts from 1 to 4096, not ";
  const std::string nodes = "--pg-nodes needs a comma list of counts from 1 to 16, not ";
  const struct {
    const char* flag;
    const char* list;
    int hi;
    std::string want;
  } bad[] = {
      {"--connections", "1,x", 4096, connections + "'x'"},
      {"--connections", "2.5", 4096, connections + "'2.5'"},
      {"--connections", "0,4", 4096, connections + "0"},
      {"--connections", "99999999999", 4096, connections + "'99999999999'"},
      {"--pg-nodes", "17", 16, nodes + "17"},
      {"--pg-nodes", ",", 16, nodes + "','"},
  };
  for (const auto& b : bad) EXPECT_EQ(parse_counts(b.flag, b.list, 1, b.hi, out), b.want) << b.list;
}

TEST(Options, EveryCountAndDurationMustBeOneThatCanRun) {
  EXPECT_EQ(check_options(SuiteOptions{}), "") << "the defaults run";
  const auto with = [](auto set) {
    SuiteOptions o;
    set(o);
    return check_options(o);
  };
  EXPECT_EQ(with([](SuiteOptions& o) { o.duration_s = 0; }),
            "--duration needs seconds from more than 0 to 3600");
  EXPECT_EQ(with([](SuiteOptions& o) { o.duration_s = -1; }),
            "--duration needs seconds from more than 0 to 3600");
  EXPECT_EQ(with([](SuiteOptions& o) { o.warmup_s = -0.5; }),
            "--warmup needs seconds from 0 to 3600");
  EXPECT_EQ(with([](SuiteOptions& o) { o.warmup_s = 0; }), "") << "no warm-up is allowed";
  EXPECT_EQ(with([](SuiteOptions& o) { o.rounds = 0; }), "--rounds needs windows from 1 to 100");
  EXPECT_EQ(with([](SuiteOptions& o) { o.keys = 0; }), "--keys needs keys from 1 to 100000000");
  EXPECT_EQ(with([](SuiteOptions& o) { o.hot_connections = 0; }),
            "--hot-connections needs connections from 1 to 4096");
  EXPECT_EQ(with([](SuiteOptions& o) { o.depth = 0; }),
            "--depth needs requests in flight from 1 to 1024");
  EXPECT_EQ(with([](SuiteOptions& o) { o.think_us = -1; }),
            "--think-us needs microseconds from 0 to 10000000");
  EXPECT_EQ(with([](SuiteOptions& o) { o.memory_holds = 0; }),
            "--memory-holds needs holds from 1 to 100000000");
  EXPECT_EQ(with([](SuiteOptions& o) { o.restart_holds = 0; }),
            "--restart-holds needs holds from 1 to 100000000");
  EXPECT_EQ(with([](SuiteOptions& o) {
              o.backoff_min_us = 5000;
              o.backoff_max_us = 4000;
            }),
            "--backoff-min-us must not exceed --backoff-max-us");
  const std::string paced_windows =
      "--paced-windows must be at least 1 and leave each window 0.1 s of --paced-seconds";
  EXPECT_EQ(with([](SuiteOptions& o) { o.idle.paced_windows = 0; }), paced_windows);
  EXPECT_EQ(with([](SuiteOptions& o) {
              o.idle.paced_s = 1;
              o.idle.paced_windows = 11;
            }),
            paced_windows);
  EXPECT_EQ(with([](SuiteOptions& o) {
              o.idle.paced_s = 1;
              o.idle.paced_windows = 10;
            }),
            "")
      << "windows of 0.1 s run";
}

TEST(Handoff, QuantilesAreOfTheSortedLatenciesAndTheTableSaysWhatFailed) {
  HandoffResult r{"holdfast-pg2", "node 1 → node 2", {500, 100, 300, 200, 400}, ""};
  EXPECT_EQ(r.quantile(0.5), 300);
  EXPECT_EQ(r.quantile(0.99), 500);
  EXPECT_EQ(r.quantile(0.2), 100);
  EXPECT_EQ(HandoffResult{}.quantile(0.5), 0);
  std::ostringstream table;
  handoff_table(table, {r, HandoffResult{"postgres", "session → session", {}, "cannot connect"}});
  EXPECT_NE(table.str().find("| holdfast-pg2 | node 1 → node 2 | 5 | 300 | 500 | 500 |"),
            std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("| postgres | session → session | failed: cannot connect |"),
            std::string::npos)
      << table.str();
  std::ostringstream none;
  handoff_table(none, {});
  EXPECT_EQ(none.str(), "");
}

}  // namespace
}  // namespace holdfast::bench
