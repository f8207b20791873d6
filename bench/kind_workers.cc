// The workers of (i), readers and writers and a semaphore on one hot key: see workers.h.
#include <memory>

#include "clock.h"
#include "workers.h"

namespace holdfast::bench {

namespace {

// A writer's weight in the checker: more than any number of readers a run can have.
constexpr std::uint32_t kWriterWeight = 1u << 20;

class KindWorker final : public Worker {
 public:
  KindWorker(KindParams p, bool writer, LockClient& c, Recorder& r, EventLoop& l,
             std::uint64_t seed)
      : Worker(c, r, l, seed), params_(p), writer_(writer) {
    if (p.kind == KindParams::Kind::kShared) {
      lock_ = kSharedLock;
      weight_ = writer ? kWriterWeight : 1;
      mode_.shared = !writer;
      recorder_.checker.set_capacity(lock_, kWriterWeight);
    } else {
      lock_ = kSemaphoreLock;
      weight_ = p.take;
      mode_.permits = p.permits;
      mode_.take = p.take;
      recorder_.checker.set_capacity(lock_, p.permits);
    }
  }

  void start() override { attempt(); }

  void on_reply(const OpReply& r) override {
    const std::int64_t now = now_ns();
    switch (r.status) {
      case OpStatus::kGranted:
        wait_ns_ = now - first_attempt_;
        recorder_.checker.queue_close(recorder_.checker.open(lock_, now, weight_), &client_);
        client_.release(lock_, r.handle, 0);
        return;
      case OpStatus::kTimeout:
        if (recorder_.recording) ++recorder_.timeouts;
        attempt();
        return;
      case OpStatus::kReleased:
      case OpStatus::kNotHeld:
        if (r.status == OpStatus::kNotHeld && recorder_.recording) ++recorder_.not_held;
        if (writer_) {
          recorder_.writer_done(wait_ns_);
        } else {
          recorder_.op_done(wait_ns_);
        }
        count_completed();
        first_attempt_ = 0;
        attempt();
        return;
      case OpStatus::kBusy:
      case OpStatus::kPong:
      case OpStatus::kError:
        fail(r);
        return;
    }
  }

 private:
  void attempt() {
    if (stopping_) return;
    if (first_attempt_ == 0) first_attempt_ = now_ns();  // a timeout's retry keeps waiting
    client_.acquire(lock_, params_.ttl_ms, params_.timeout_ms, mode_, 0);
  }

  KindParams params_;
  bool writer_;
  std::uint64_t lock_ = 0;
  std::uint32_t weight_ = 1;
  AcquireMode mode_;
  std::int64_t first_attempt_ = 0;
  std::int64_t wait_ns_ = 0;
};

}  // namespace

WorkerFactory kind_worker(KindParams params) {
  return [params](int i, LockClient& c, Recorder& r, EventLoop& l) -> std::unique_ptr<Worker> {
    const bool writer = params.kind == KindParams::Kind::kShared && params.writer_every > 0 &&
                        i % params.writer_every == 0;
    const std::uint64_t seed = static_cast<std::uint64_t>(now_ns()) * 0x9E3779B97F4A7C15ULL +
                               static_cast<std::uint64_t>(i);
    return std::make_unique<KindWorker>(params, writer, c, r, l, seed);
  };
}

}  // namespace holdfast::bench
