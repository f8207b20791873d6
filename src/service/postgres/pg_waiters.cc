#include "service/postgres/pg_waiters.h"

#include <algorithm>

namespace holdfast {

namespace {
// A call submitted before its connection closed starts within milliseconds; a minute is far
// more than any executor backlog, and bounds the memory to the connections of one minute.
constexpr std::chrono::seconds kRememberClosed{60};
}  // namespace

class LocalWaiters::Waiter {
 public:
  std::string key;
  SessionId session = 0;
  std::condition_variable cv;
  bool poked = false;
  bool cancelled = false;
  bool queued = false;       // in queues_[key]
  bool linked = false;       // not yet left
  bool batched = false;      // its grant attempts go through the commit batches
  std::uint64_t opened = 0;  // the generation of the queue this waiter opened
  std::optional<TimePoint> retry;
  std::list<Waiter*>::iterator pos;
  struct Watched {
    std::string key;
    std::list<Waiter*>::iterator pos;  // in the key's watchers
    std::uint64_t opened = 0;
  };
  std::vector<Watched> watched;  // a multi-key waiter's keys
};

void LocalWaiters::WaiterDeleter::operator()(Waiter* w) const {
  std::vector<Closed> closed;
  {
    std::lock_guard lock(owner->mu_);
    if (w->linked) closed = owner->unlink(*w, std::nullopt);
  }
  delete w;
  owner->report(closed);
}

void LocalWaiters::report(const std::vector<Closed>& closed) {
  if (!on_closed_) return;
  for (const Closed& c : closed) on_closed_(c.key, c.generation);
}

LocalWaiters::Queue& LocalWaiters::queue_of(std::string_view key, std::uint64_t& opened) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    it = queues_.emplace(std::string(key), Queue{}).first;
    it->second.generation = opened = ++last_generation_;
  }
  return it->second;
}

LocalWaiters::Ticket LocalWaiters::join(std::string_view key, SessionId session, bool batched) {
  Ticket t(new Waiter, WaiterDeleter{this});
  Waiter& w = *t;
  w.key = std::string(key);
  w.session = session;
  w.batched = batched;
  std::lock_guard lock(mu_);
  w.linked = true;
  all_.insert(&w);
  if (stopping_ || (session != 0 && closed_.count(session) != 0)) w.cancelled = true;
  if (session != 0) by_session_.emplace(session, &w);
  if (!key.empty()) {
    auto& q = queue_of(key, w.opened).waiters;
    w.pos = q.insert(q.end(), &w);
    w.queued = true;
    if (q.front() == &w) w.poked = true;  // nobody ahead: try at once
  }
  return t;
}

LocalWaiters::Ticket LocalWaiters::watch(const std::vector<std::string>& keys, SessionId session) {
  Ticket t(new Waiter, WaiterDeleter{this});
  Waiter& w = *t;
  w.session = session;
  w.poked = true;  // try at once
  std::lock_guard lock(mu_);
  w.linked = true;
  all_.insert(&w);
  if (stopping_ || (session != 0 && closed_.count(session) != 0)) w.cancelled = true;
  if (session != 0) by_session_.emplace(session, &w);
  w.watched.reserve(keys.size());
  for (const std::string& key : keys) {
    Waiter::Watched watched{key, {}, 0};
    auto& q = queue_of(key, watched.opened).watchers;
    watched.pos = q.insert(q.end(), &w);
    w.watched.push_back(std::move(watched));
  }
  return t;
}

std::vector<std::pair<std::string, std::uint64_t>> LocalWaiters::opened_generations(
    const Waiter& w) const {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const Waiter::Watched& k : w.watched) {
    if (k.opened != 0) out.emplace_back(k.key, k.opened);
  }
  return out;
}

bool LocalWaiters::is_head(const Waiter& w) const {
  std::lock_guard lock(mu_);
  if (!w.queued) return false;
  auto it = queues_.find(w.key);
  return it != queues_.end() && it->second.waiters.front() == &w;
}

std::uint64_t LocalWaiters::opened_generation(const Waiter& w) const { return w.opened; }

LocalWaiters::Wake LocalWaiters::wait(Waiter& w, TimePoint deadline) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (w.cancelled) return Wake::kCancelled;
    const auto now = std::chrono::steady_clock::now();
    const bool head =
        (w.queued && queues_.find(w.key)->second.waiters.front() == &w) || !w.watched.empty();
    if (head && (w.poked || (w.retry && *w.retry <= now))) {
      w.poked = false;
      w.retry.reset();
      return Wake::kAttempt;
    }
    if (now >= deadline) return Wake::kDeadline;
    TimePoint until = deadline;
    if (head && w.retry && *w.retry < until) until = *w.retry;
    w.cv.wait_until(lock, until);
  }
}

void LocalWaiters::retry_at(Waiter& w, TimePoint at) {
  std::lock_guard lock(mu_);
  if (!w.retry || at < *w.retry) w.retry = at;
}

void LocalWaiters::leave(Waiter& w, std::optional<TimePoint> next_try) {
  std::vector<Closed> closed;
  {
    std::lock_guard lock(mu_);
    if (w.linked) closed = unlink(w, next_try);
  }
  report(closed);
}

std::vector<LocalWaiters::Closed> LocalWaiters::unlink(Waiter& w,
                                                       std::optional<TimePoint> next_try) {
  w.linked = false;
  all_.erase(&w);
  if (w.session != 0) {
    auto [first, last] = by_session_.equal_range(w.session);
    for (auto it = first; it != last; ++it) {
      if (it->second == &w) {
        by_session_.erase(it);
        break;
      }
    }
  }
  std::vector<Closed> closed;
  for (const Waiter::Watched& k : w.watched) {
    auto q = queues_.find(k.key);
    q->second.watchers.erase(k.pos);
    if (q->second.watchers.empty() && q->second.waiters.empty()) {
      closed.push_back(Closed{q->first, q->second.generation});
      queues_.erase(q);
    }
  }
  w.watched.clear();
  if (!w.queued) return closed;
  w.queued = false;
  auto q = queues_.find(w.key);
  auto& waiters = q->second.waiters;
  const bool was_head = waiters.front() == &w;
  waiters.erase(w.pos);
  if (waiters.empty()) {
    if (q->second.watchers.empty()) {
      closed.push_back(Closed{q->first, q->second.generation});
      queues_.erase(q);
    }
    return closed;
  }
  if (!was_head) return closed;
  Waiter* next = waiters.front();
  if (next_try) {
    next->retry = next_try;
  } else if (w.poked || !w.retry) {
    next->poked = true;  // the key may be free now: find out at once
  } else {
    next->retry = w.retry;  // inherit the departing head's reason to wait
  }
  next->cv.notify_one();
  return closed;
}

void LocalWaiters::poke(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = queues_.find(key);
  if (it == queues_.end()) return;
  poke_watchers(it->second);
  if (it->second.waiters.empty()) return;
  Waiter* head = it->second.waiters.front();
  head->poked = true;
  head->cv.notify_one();
}

void LocalWaiters::poke_watchers(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = queues_.find(key);
  if (it != queues_.end()) poke_watchers(it->second);
}

void LocalWaiters::poke_watchers(Queue& q) {
  for (Waiter* w : q.watchers) {
    w->poked = true;
    w->cv.notify_one();
  }
}

void LocalWaiters::poke_all() {
  std::lock_guard lock(mu_);
  for (auto& [key, queue] : queues_) {
    for (Waiter* w : queue.watchers) {
      w->poked = true;
      w->cv.notify_one();
    }
    if (queue.waiters.empty()) continue;
    queue.waiters.front()->poked = true;
    queue.waiters.front()->cv.notify_one();
  }
}

bool LocalWaiters::begin_call(SessionId session) {
  std::lock_guard lock(mu_);
  if (stopping_) return false;
  if (session == 0) return true;
  if (closed_.count(session) != 0) return false;
  ++sessions_[session].calls;
  return true;
}

bool LocalWaiters::end_call(SessionId session) {
  std::lock_guard lock(mu_);
  if (session == 0) return false;
  auto it = sessions_.find(session);
  if (it != sessions_.end() && --it->second.calls == 0 && !it->second.session_holds)
    sessions_.erase(it);
  return closed_.count(session) != 0;
}

void LocalWaiters::note_session_hold(SessionId session) {
  std::lock_guard lock(mu_);
  if (session != 0) sessions_[session].session_holds = true;
}

bool LocalWaiters::close_session(SessionId session) {
  std::lock_guard lock(mu_);
  remember_closed(session, std::chrono::steady_clock::now());
  auto [first, last] = by_session_.equal_range(session);
  for (auto it = first; it != last; ++it) {
    it->second->cancelled = true;
    it->second->cv.notify_one();
  }
  auto s = sessions_.find(session);
  if (s == sessions_.end()) return false;
  const bool holds = s->second.session_holds;
  s->second.session_holds = false;
  if (s->second.calls == 0) sessions_.erase(s);
  return holds;
}

void LocalWaiters::remember_closed(SessionId session, TimePoint now) {
  while (!closed_order_.empty() && now - closed_order_.front().first > kRememberClosed) {
    closed_.erase(closed_order_.front().second);
    closed_order_.pop_front();
  }
  if (closed_.insert(session).second) closed_order_.emplace_back(now, session);
}

void LocalWaiters::close_all() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (Waiter* w : all_) {
    w->cancelled = true;
    w->cv.notify_one();
  }
}

std::size_t LocalWaiters::count(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = queues_.find(key);
  return it == queues_.end() ? 0 : it->second.waiters.size() + it->second.watchers.size();
}

bool LocalWaiters::has_queue(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = queues_.find(key);
  return it != queues_.end() && !it->second.waiters.empty();
}

bool LocalWaiters::head_attempts_batched(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = queues_.find(key);
  return it != queues_.end() && !it->second.waiters.empty() && it->second.waiters.front()->batched;
}

std::size_t LocalWaiters::total() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const Waiter* w : all_) n += std::max<std::size_t>(w->watched.size(), 1);
  return n;
}

}  // namespace holdfast
