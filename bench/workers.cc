// Workload workers: see workers.h for what each one does and measures.
#include "workers.h"

#include <algorithm>
#include <string>

#include "clock.h"

namespace holdfast::bench {

namespace {

class PairsWorker final : public Worker {
 public:
  PairsWorker(PairsParams p, LockClient& c, Recorder& r, EventLoop& l, std::uint64_t seed)
      : Worker(c, r, l, seed), params_(p) {}

  void start() override { next(); }

  void on_reply(const OpReply& r) override {
    const std::int64_t now = now_ns();
    switch (r.status) {
      case OpStatus::kGranted:
        // Critical section: from this reply until the release leaves at the flush point.
        recorder_.checker.queue_close(recorder_.checker.open(lock_, now), &client_);
        client_.release(lock_, r.handle, 0);
        return;
      case OpStatus::kBusy:
        if (recorder_.recording) ++recorder_.busy;
        next();
        return;
      case OpStatus::kReleased:
      case OpStatus::kNotHeld:
        if (r.status == OpStatus::kNotHeld && recorder_.recording) ++recorder_.not_held;
        recorder_.op_done(now - started_);
        count_completed();
        next();
        return;
      case OpStatus::kTimeout:
      case OpStatus::kPong:
      case OpStatus::kError:
        fail(r);
        return;
    }
  }

 private:
  void next() {
    if (stopping_) return;
    lock_ = kPairsFirstLock + random() % params_.keys;
    started_ = now_ns();
    client_.try_acquire(lock_, params_.ttl_ms, 0);
  }

  PairsParams params_;
  std::uint64_t lock_ = 0;
  std::int64_t started_ = 0;
};

class PingPairWorker final : public Worker {
 public:
  using Worker::Worker;

  void start() override { next(); }

  void on_reply(const OpReply& r) override {
    if (r.status != OpStatus::kPong) {
      fail(r);
      return;
    }
    if (!second_) {
      second_ = true;
      client_.ping(0);
      return;
    }
    recorder_.op_done(now_ns() - started_);
    count_completed();
    next();
  }

 private:
  void next() {
    if (stopping_) return;
    second_ = false;
    started_ = now_ns();
    client_.ping(0);
  }

  bool second_ = false;
  std::int64_t started_ = 0;
};

class HotKeyWorker final : public Worker {
 public:
  HotKeyWorker(HotKeyParams p, LockClient& c, Recorder& r, EventLoop& l, std::uint64_t seed)
      : Worker(c, r, l, seed), params_(p), backoff_ns_(p.backoff_min_ns) {}

  void start() override {
    // Start spread over one think time, so that 64 connections do not arrive as one burst.
    sleep(params_.think_ns);
  }

  void on_reply(const OpReply& r) override {
    const std::int64_t now = now_ns();
    switch (r.status) {
      case OpStatus::kGranted:
        wait_ns_ = now - first_attempt_;
        recorder_.checker.queue_close(recorder_.checker.open(kHotLock, now), &client_);
        client_.release(kHotLock, r.handle, 0);
        return;
      case OpStatus::kBusy:
        if (recorder_.recording) ++recorder_.busy;
        sleep(backoff_ns_);
        backoff_ns_ = std::min(backoff_ns_ * 2, params_.backoff_max_ns);
        return;
      case OpStatus::kTimeout:
        if (recorder_.recording) ++recorder_.timeouts;
        attempt();
        return;
      case OpStatus::kReleased:
      case OpStatus::kNotHeld:
        if (r.status == OpStatus::kNotHeld && recorder_.recording) ++recorder_.not_held;
        recorder_.op_done(wait_ns_);
        count_completed();
        first_attempt_ = 0;
        backoff_ns_ = params_.backoff_min_ns;
        if (params_.blocking) {
          attempt();
        } else {
          sleep(params_.think_ns);
        }
        return;
      case OpStatus::kPong:
      case OpStatus::kError:
        fail(r);
        return;
    }
  }

  void on_timer(std::uint64_t cookie) override {
    if (cookie == timer_cookie_) attempt();
  }

 private:
  // Sleeps a jittered `ns` (uniform in [ns/2, ns]), then attempts.
  void sleep(std::int64_t ns) {
    if (ns <= 0) {
      attempt();
      return;
    }
    const std::int64_t half = ns / 2;
    const std::int64_t jittered = half + static_cast<std::int64_t>(random() % (half + 1));
    loop_.add_timer(now_ns() + jittered, this, ++timer_cookie_);
  }

  void attempt() {
    if (stopping_) return;
    if (first_attempt_ == 0) first_attempt_ = now_ns();
    if (params_.blocking) {
      client_.acquire(kHotLock, params_.ttl_ms, params_.timeout_ms, 0);
    } else {
      client_.try_acquire(kHotLock, params_.ttl_ms, 0);
    }
  }

  HotKeyParams params_;
  std::int64_t backoff_ns_;
  std::int64_t first_attempt_ = 0;
  std::int64_t wait_ns_ = 0;
  std::uint64_t timer_cookie_ = 0;
};

class PipelineWorker final : public Worker {
 public:
  PipelineWorker(PipelineParams p, LockClient& c, Recorder& r, EventLoop& l, std::uint64_t seed)
      : Worker(c, r, l, seed), params_(p) {}

  void start() override {
    for (int i = 0; i < params_.depth; ++i) next();
  }

  void on_reply(const OpReply& r) override {
    if (r.status == OpStatus::kBusy) {
      if (recorder_.recording) ++recorder_.busy;
    } else if (r.status != OpStatus::kGranted) {
      fail(r);
      return;
    }
    recorder_.op_done(now_ns() - static_cast<std::int64_t>(r.tag));
    count_completed();
    next();
  }

 private:
  void next() {
    if (stopping_) return;
    // 2^40 locks: a repeat within one TTL is vanishingly rare.
    const std::uint64_t lock = kPipelineFirstLock + (random() >> 24);
    client_.try_acquire(lock, params_.ttl_ms, static_cast<std::uint64_t>(now_ns()));
  }

  PipelineParams params_;
};

std::uint64_t seed_for(int index) {
  return static_cast<std::uint64_t>(now_ns()) * 0x9E3779B97F4A7C15ULL +
         static_cast<std::uint64_t>(index);
}

}  // namespace

WorkerFactory pairs_worker(PairsParams params) {
  return [params](int i, LockClient& c, Recorder& r, EventLoop& l) -> std::unique_ptr<Worker> {
    return std::make_unique<PairsWorker>(params, c, r, l, seed_for(i));
  };
}

WorkerFactory ping_pair_worker() {
  return [](int i, LockClient& c, Recorder& r, EventLoop& l) -> std::unique_ptr<Worker> {
    return std::make_unique<PingPairWorker>(c, r, l, seed_for(i));
  };
}

WorkerFactory hot_key_worker(HotKeyParams params) {
  return [params](int i, LockClient& c, Recorder& r, EventLoop& l) -> std::unique_ptr<Worker> {
    return std::make_unique<HotKeyWorker>(params, c, r, l, seed_for(i));
  };
}

WorkerFactory pipeline_worker(PipelineParams params) {
  return [params](int i, LockClient& c, Recorder& r, EventLoop& l) -> std::unique_ptr<Worker> {
    return std::make_unique<PipelineWorker>(params, c, r, l, seed_for(i));
  };
}

}  // namespace holdfast::bench
