#include "service/postgres/pg_batch.h"

#include <algorithm>
#include <numeric>

namespace holdfast::pg {

CommitBatcher::CommitBatcher(PgPool& pool, std::size_t lanes, std::string claim,
                             std::function<Status()> settle)
    : pool_(pool), claim_(std::move(claim)), settle_(std::move(settle)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(lanes, 1); ++i)
    lanes_.push_back(std::make_unique<Lane>());
}

CommitBatcher::Outcome CommitBatcher::run(std::string_view key, const std::string& name,
                                          const Params& params,
                                          const std::function<void()>& queued) {
  Lane& lane = *lanes_[std::hash<std::string_view>{}(key) % lanes_.size()];
  Op op{key, &name, &params, name.size() + 16, bool(queued), std::nullopt, {}};
  for (const auto& v : params.values()) op.bytes += (v ? v->size() : 0) + 4;

  std::unique_lock lock(lane.mu);
  lane.queue.push_back(&op);
  lane.arrived.notify_all();
  if (queued) {
    // Outside the lane's lock: the woken caller queues in this lane.
    lock.unlock();
    queued();
    lock.lock();
  }
  while (!op.outcome && (lane.busy || lane.queue.front() != &op)) op.cv.wait(lock);
  if (op.outcome) return std::move(*op.outcome);

  // The leader: take what is queued, up to the bound (one statement always goes).
  lane.busy = true;
  const auto until = std::chrono::steady_clock::now() + kFollowerWaitUs;
  while (awaits_follower(lane)) {
    if (lane.arrived.wait_until(lock, until) == std::cv_status::timeout) break;
  }
  std::vector<Op*> batch;
  std::size_t bytes = 0;
  while (!lane.queue.empty() && batch.size() < kMaxOps) {
    Op* next = lane.queue.front();
    if (!batch.empty() && bytes + next->bytes > kMaxBytes) break;
    bytes += next->bytes;
    batch.push_back(next);
    lane.queue.pop_front();
  }
  lock.unlock();
  std::vector<Outcome> outcomes = send(batch);
  lock.lock();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i]->outcome = std::move(outcomes[i]);
    if (batch[i] != &op) batch[i]->cv.notify_one();
  }
  lane.busy = false;
  if (!lane.queue.empty()) lane.queue.front()->cv.notify_one();  // the next leader
  return std::move(*op.outcome);
}

bool CommitBatcher::awaits_follower(const Lane& lane) {
  const std::size_t n = std::min(lane.queue.size(), kMaxOps);
  for (std::size_t i = 0; i < n; ++i) {
    if (!lane.queue[i]->hand_over) continue;
    bool followed = false;
    for (std::size_t j = i + 1; j < lane.queue.size() && !followed; ++j)
      followed = lane.queue[j]->key == lane.queue[i]->key;
    if (!followed) return true;
  }
  return false;
}

std::size_t CommitBatcher::queued() const {
  std::size_t n = 0;
  for (const auto& lane : lanes_) {
    std::lock_guard lock(lane->mu);
    n += lane->queue.size();
  }
  return n;
}

std::vector<CommitBatcher::Outcome> CommitBatcher::send(const std::vector<Op*>& batch) {
  const std::size_t n = batch.size();
  std::vector<Outcome> out;
  out.reserve(n);
  auto all = [&](const Error& e, bool alone) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(Outcome{e, alone});
    return std::move(out);
  };
  if (settle_) {
    if (auto st = settle_(); !st.ok()) return all(st.error(), false);
  }
  // Key order: the rows are locked in the order every multi-row statement locks them.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return batch[a]->key < batch[b]->key; });
  std::vector<PgPool::Call> calls;
  std::deque<Params> claims;    // the claims' parameters, alive until the batch answered
  std::vector<std::size_t> at;  // at[k]: the result of the k-th statement in key order
  calls.reserve(n);
  at.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Op& op = *batch[order[k]];
    const bool opens_key = k == 0 || batch[order[k - 1]]->key != op.key;
    const bool shared_key = k + 1 < n && batch[order[k + 1]]->key == op.key;
    if (opens_key && shared_key) {
      claims.push_back(Params().text(op.key));
      calls.push_back(PgPool::Call{&claim_, &claims.back()});
    }
    at.push_back(calls.size());
    calls.push_back(PgPool::Call{op.name, op.params});
  }
  ++batches_;
  statements_ += n;
  auto results = pool_.run_batch(calls);
  if (!results.ok()) return all(results.error(), false);
  const bool committed =
      results->size() == calls.size() &&
      std::all_of(results->begin(), results->end(), [](const Rows& r) { return r.succeeded(); });
  if (!committed)
    return all(Error(ErrorCode::kUnavailable, "rolled back with its batch"), /*alone=*/true);
  std::vector<std::optional<Rows>> mine(n);
  for (std::size_t k = 0; k < n; ++k) mine[order[k]] = std::move((*results)[at[k]]);
  for (std::size_t i = 0; i < n; ++i) out.push_back(Outcome{std::move(*mine[i]), false});
  return out;
}

}  // namespace holdfast::pg
