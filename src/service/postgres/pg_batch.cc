#include "service/postgres/pg_batch.h"

#include <algorithm>
#include <numeric>

namespace holdfast::pg {

CommitBatcher::CommitBatcher(PgPool& pool, std::size_t lanes, std::string claim,
                             std::function<Status()> settle, std::vector<SetForm> sets)
    : pool_(pool), claim_(std::move(claim)), settle_(std::move(settle)), sets_(std::move(sets)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(lanes, 1); ++i)
    lanes_.push_back(std::make_unique<Lane>());
}

CommitBatcher::Outcome CommitBatcher::run(std::string_view key, const std::string& name,
                                          const Params& params,
                                          const std::function<void()>& queued) {
  Lane& lane = *lanes_[std::hash<std::string_view>{}(key) % lanes_.size()];
  Op op{key, &name, &params, name.size() + 16, bool(queued), std::nullopt, {}, {}, {}, {}};
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
  Answers answers = lead(lane, lock);
  lock.unlock();
  give(answers);
  return std::move(*op.outcome);
}

void CommitBatcher::run_async(std::string_view key, const std::string& name, Params params,
                              std::function<void(Outcome, const Params&)> answered) {
  Lane& lane = *lanes_[std::hash<std::string_view>{}(key) % lanes_.size()];
  auto op = std::make_unique<Op>();
  op->owned_key = std::string(key);
  op->owned_params = std::move(params);
  op->key = op->owned_key;
  op->name = &name;
  op->params = &op->owned_params;
  op->bytes = name.size() + 16;
  for (const auto& v : op->owned_params.values()) op->bytes += (v ? v->size() : 0) + 4;
  op->hand_over = false;
  op->answered = std::move(answered);

  std::lock_guard lock(lane.mu);
  lane.queue.push_back(op.release());
  lane.arrived.notify_all();
  if (!lane.busy && lane.queue.size() == 1) hand_on(lane);
}

CommitBatcher::Answers CommitBatcher::lead(Lane& lane, std::unique_lock<std::mutex>& lock) {
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
  Answers answers;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch[i]->answered) {
      answers.emplace_back(std::unique_ptr<Op>(batch[i]), std::move(outcomes[i]));
      continue;
    }
    batch[i]->outcome = std::move(outcomes[i]);
    batch[i]->cv.notify_one();
  }
  lane.busy = false;
  hand_on(lane);
  return answers;
}

void CommitBatcher::hand_on(Lane& lane) {
  if (lane.queue.empty()) return;
  Op* next = lane.queue.front();
  if (!next->answered) {
    next->cv.notify_one();  // its caller leads
    return;
  }
  lane.busy = true;
  spawn_([this, &lane] { lead_job(lane); });
}

void CommitBatcher::lead_job(Lane& lane) {
  std::unique_lock lock(lane.mu);
  Answers answers = lead(lane, lock);
  lock.unlock();
  give(answers);
}

void CommitBatcher::give(Answers& answers) {
  for (auto& [op, outcome] : answers) op->answered(std::move(outcome), op->owned_params);
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
  // Each statement's round: its rank among its key's statements (see Set statements).
  std::vector<std::size_t> round(n, 0);
  std::size_t rounds = n == 0 ? 0 : 1;
  for (std::size_t k = 1; k < n; ++k) {
    if (batch[order[k]]->key != batch[order[k - 1]]->key) continue;
    round[order[k]] = round[order[k - 1]] + 1;
    rounds = std::max(rounds, round[order[k]] + 1);
  }
  std::vector<PgPool::Call> calls;
  std::deque<Params> params;  // the claims' and set statements' parameters, alive until answered
  // Where each statement's answer is: calls[call], and for a set statement its row and form.
  struct Slot {
    std::size_t call = 0;
    int row = 0;
    const SetForm* form = nullptr;
  };
  std::vector<Slot> slot(n);
  calls.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Op& op = *batch[order[k]];
    const bool opens_key = k == 0 || batch[order[k - 1]]->key != op.key;
    const bool shared_key = k + 1 < n && batch[order[k + 1]]->key == op.key;
    if (opens_key && shared_key) {
      params.push_back(Params().text(op.key));
      calls.push_back(PgPool::Call{&claim_, &params.back()});
    }
  }
  std::vector<bool> placed(n, false);
  for (std::size_t r = 0; r < rounds; ++r) {
    for (const SetForm& form : sets_) {
      std::vector<std::size_t> mine;  // in key order
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = order[k];
        if (round[i] == r && *batch[i]->name == form.single) mine.push_back(i);
      }
      if (mine.size() < 2) continue;
      Params arrays;
      const std::size_t width = batch[mine[0]]->params->values().size();
      for (std::size_t p = 0; p < width; ++p) {
        std::string text = "{";
        for (std::size_t j = 0; j < mine.size(); ++j) {
          if (j > 0) text += ',';
          append_array_element(text, batch[mine[j]]->params->values()[p]);
        }
        arrays.text(text + "}");
      }
      params.push_back(std::move(arrays));
      for (std::size_t j = 0; j < mine.size(); ++j) {
        slot[mine[j]] = Slot{calls.size(), static_cast<int>(j), &form};
        placed[mine[j]] = true;
      }
      calls.push_back(PgPool::Call{&form.set, &params.back()});
      ++set_statements_;
      set_calls_ += mine.size();
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = order[k];
      if (round[i] != r || placed[i]) continue;
      slot[i] = Slot{calls.size(), 0, nullptr};
      calls.push_back(PgPool::Call{batch[i]->name, batch[i]->params});
    }
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
  for (std::size_t i = 0; i < n; ++i) {
    Rows& rows = (*results)[slot[i].call];
    if (slot[i].form == nullptr) {
      out.push_back(Outcome{std::move(rows), false});
      continue;
    }
    std::optional<Rows> share;
    if (rows.size() > slot[i].row) share = slot[i].form->answer(rows, slot[i].row);
    if (!share) {
      // Not done by the set statement: it runs alone, after this batch.
      ++set_alone_;
      out.push_back(Outcome{Error(ErrorCode::kUnavailable, "run alone"), /*alone=*/true});
    } else if (!share->succeeded()) {
      // Done, but its answer is lost: settled as any write whose outcome is unknown.
      out.push_back(Outcome{unknown_outcome("could not copy a batch's answer"), false});
    } else {
      out.push_back(Outcome{std::move(*share), false});
    }
  }
  return out;
}

}  // namespace holdfast::pg
