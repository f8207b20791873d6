#include "server/events/event_bus.h"

#include <algorithm>

#include "core/validation.h"

namespace holdfast::events {

std::optional<Error> check_prefix(std::string_view prefix) {
  if (prefix.empty()) return std::nullopt;
  std::optional<Error> err = check_key(prefix);
  if (!err) return std::nullopt;
  if (err->message.starts_with("key ")) err->message = "prefix " + err->message.substr(4);
  err->with("field", "prefix");
  return err;
}

EventBus::EventBus(LockService& service, const Clock& clock, BusOptions options)
    : service_(service),
      clock_(clock),
      options_(options),
      last_id_(static_cast<std::uint64_t>(clock.now_ms()) * 1000),
      resumable_from_(last_id_ + 1) {}

EventBus::~EventBus() {
  if (active_) service_.set_event_sink(nullptr);
}

BusStats EventBus::stats() const {
  BusStats s = stats_;
  s.watchers = static_cast<std::size_t>(
      std::count_if(watchers_.begin(), watchers_.end(), [](const Entry& e) { return e.watcher; }));
  return s;
}

void EventBus::activate() {
  if (active_) return;
  active_ = true;
  ready_ = false;
  // Whatever happened while events were off was not recorded: nobody who saw only what came
  // before can resume.
  resumable_from_ = last_id_ + 1;
  service_.set_event_sink(this);  // a single server is ready at once (on_events_ready)
}

EventBus::Start EventBus::watch(Watcher& watcher, const Principal& principal, std::string prefix,
                                std::optional<std::uint64_t> last_id) {
  activate();
  Entry entry{&watcher, &principal, std::move(prefix), !ready_};
  Start start = Start::kLive;
  if (last_id) {
    const std::uint64_t seen = *last_id;
    const bool in_window = window_.empty() ? seen == last_id_ : seen + 1 >= window_.front().id;
    if (seen >= resumable_from_ && seen <= last_id_ && in_window) {
      start = Start::kResumed;
      for (const Published& p : window_)
        if (p.id > seen && sees(entry, p)) {
          ++stats_.sent;
          watcher.on_event(p);
        }
    } else {
      start = Start::kReset;
    }
  }
  watchers_.push_back(std::move(entry));
  return start;
}

void EventBus::unwatch(Watcher& watcher) {
  for (Entry& e : watchers_)
    if (e.watcher == &watcher) e.watcher = nullptr;
  if (!telling_) compact();
}

void EventBus::compact() {
  const bool had = !watchers_.empty();
  std::erase_if(watchers_, [](const Entry& e) { return e.watcher == nullptr; });
  if (had && watchers_.empty()) idle_since_ = clock_.now_ms();
}

bool EventBus::sees(const Entry& e, const Published& p) const {
  return p.key.starts_with(e.prefix) && service_.may_read(*e.principal, p.key);
}

void EventBus::on_events_ready() {
  if (!active_ || ready_) return;
  ready_ = true;
  telling_ = true;
  for (std::size_t i = 0; i < watchers_.size(); ++i) {
    Entry& e = watchers_[i];
    if (e.watcher == nullptr || !e.waits_for_ready) continue;
    e.waits_for_ready = false;
    e.watcher->on_ready();
  }
  telling_ = false;
  compact();
}

void EventBus::on_events_lost() {
  if (!active_) return;
  resumable_from_ = last_id_ + 1;  // nobody resumes across the loss
  telling_ = true;
  for (std::size_t i = 0; i < watchers_.size(); ++i)
    if (watchers_[i].watcher != nullptr) watchers_[i].watcher->on_reset(last_id_);
  telling_ = false;
  compact();
}

void EventBus::on_lock_event(LockEvent&& event) {
  if (!active_) return;
  Published p;
  p.id = ++last_id_;
  p.kind = event.kind;
  p.json = event_json(event, p.id);
  p.key = std::move(event.key);
  ++stats_.events;
  telling_ = true;
  // By index: a watcher told here may start another watch (it never does today, but a push
  // into watchers_ must not invalidate the loop).
  for (std::size_t i = 0; i < watchers_.size(); ++i) {
    if (watchers_[i].watcher == nullptr || !sees(watchers_[i], p)) continue;
    ++stats_.sent;
    watchers_[i].watcher->on_event(p);
  }
  telling_ = false;
  compact();
  p.frames[0] = std::string();  // the window keeps the JSON only
  p.frames[1] = std::string();
  window_.push_back(std::move(p));
  while (window_.size() > options_.window) window_.pop_front();
  if (watchers_.empty() && clock_.now_ms() - idle_since_ >= options_.linger_ms) {
    // Nobody came back: events go off, and with them their cost.
    active_ = false;
    ready_ = false;
    service_.set_event_sink(nullptr);
  }
}

}  // namespace holdfast::events
