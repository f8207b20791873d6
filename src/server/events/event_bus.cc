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

const SharedText& Batch::text(Format format, Render render) const {
  SharedText& t = texts_[format];
  if (made_[format]) return t;
  made_[format] = true;
  t = {};  // the batch's own hold on the block goes, so use_count() counts the watchers'
  std::shared_ptr<std::string>& block = blocks_[format];
  if (block && block.use_count() == 1) {
    block->clear();  // nobody holds any of it: written again from its start, memory kept
  } else if (!block || block->size() >= kBlockBytes) {
    block = std::make_shared<std::string>();
    block->reserve(kBlockBytes);
  }
  const std::size_t begin = block->size();
  for (const Published* e : events_) render(*block, *e);
  t = {block, begin, block->size()};
  return t;
}

EventBus::EventBus(LockService& service, const Clock& clock, BusOptions options)
    : service_(service),
      clock_(clock),
      options_(options),
      last_id_(static_cast<std::uint64_t>(clock.now_ms()) * 1000),
      resumable_from_(last_id_ + 1),
      window_(options_.window) {}

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
  lingers_ = false;
  // Whatever happened while events were off was not recorded: nobody who saw only what came
  // before can resume.
  resumable_from_ = last_id_ + 1;
  // Until a reader that can come back watches, the window holds the batch being told only.
  window_.reset(std::min(kMostUntold, options_.window));
  untold_ = 0;
  service_.set_event_sink(this);  // a single server is ready at once (on_events_ready)
}

EventBus::Start EventBus::watch(Watcher& watcher, const Principal& principal, std::string prefix,
                                std::optional<std::uint64_t> last_id) {
  activate();
  Entry entry{&watcher, &principal, std::move(prefix), !ready_, 0};
  if (watcher.can_resume() && !lingers_) {
    lingers_ = true;
    window_.grow(options_.window);  // from now on, what it may come back for is kept
  }
  Start start = Start::kLive;
  if (last_id) {
    const std::uint64_t seen = *last_id;
    const bool in_window = window_.empty() ? seen == last_id_ : seen + 1 >= window_.front().id;
    if (seen >= resumable_from_ && seen <= last_id_ && in_window) {
      start = Start::kResumed;
      for (std::size_t i = 0; i < window_.size(); ++i)
        if (const Published& p = window_[i]; p.id > seen && sees(entry, p)) {
          ++stats_.sent;
          watcher.on_event(p);
        }
    } else {
      start = Start::kReset;
    }
  }
  // Events already made (those of a batch not yet told included) came above or are not for it.
  entry.from_id = last_id_;
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
  if (!had || !watchers_.empty()) return;
  if (lingers_) {
    idle_since_ = clock_.now_ms();
  } else {
    deactivate();  // nobody can come back for what follows
  }
}

void EventBus::deactivate() {
  active_ = false;
  ready_ = false;
  untold_ = 0;
  service_.set_event_sink(nullptr);
}

bool EventBus::sees(const Entry& e, const Published& p) const {
  return p.key.starts_with(e.prefix) && service_.may_read(*e.principal, p.key);
}

void EventBus::on_events_ready() {
  if (!active_ || ready_) return;
  ready_ = true;
  telling_ = true;
  // Told already, to nobody who waited: the window's events but the untold batch. On a node over
  // PostgreSQL, another node's change may arrive before this node's own ready.
  const std::size_t told = window_.size() - untold_;
  for (std::size_t i = 0; i < watchers_.size(); ++i) {
    Entry& e = watchers_[i];
    if (e.watcher == nullptr || !e.waits_for_ready) continue;
    e.waits_for_ready = false;
    e.watcher->on_ready();
    const bool kept = told == 0 || window_.front().id <= e.from_id + 1;
    if (!kept) {
      watchers_[i].watcher->on_reset(last_id_);  // more came meanwhile than the window keeps
      continue;
    }
    for (std::size_t j = 0; j < told && watchers_[i].watcher != nullptr; ++j) {
      const Published& p = window_[j];
      if (p.id <= watchers_[i].from_id || !sees(watchers_[i], p)) continue;
      ++stats_.sent;
      watchers_[i].watcher->on_event(p);
    }
  }
  telling_ = false;
  compact();
}

void EventBus::on_events_lost() {
  if (!active_) return;
  tell();                          // what was made before the loss, then the reset
  resumable_from_ = last_id_ + 1;  // nobody resumes across the loss
  telling_ = true;
  for (std::size_t i = 0; i < watchers_.size(); ++i)
    if (watchers_[i].watcher != nullptr) watchers_[i].watcher->on_reset(last_id_);
  telling_ = false;
  compact();
}

void EventBus::on_lock_event(const LockEventView& event) {
  if (!active_) return;
  body_.clear();
  append_event_body(body_, event);
  on_written_event({event.kind, event.key, body_});
}

void EventBus::on_written_event(const WrittenEvent& event) {
  if (!active_) return;
  // A batch never grows past the window, whose oldest slot the next event takes.
  if (untold_ >= std::min(kMostUntold, window_.capacity())) {
    tell();
    if (!active_) return;  // the last watcher fell behind
  }
  Published& p = window_.push();  // the oldest's memory carries the new one once full
  p.id = ++last_id_;
  p.kind = event.kind;
  p.json.clear();
  append_event_json(p.json, p.id, event.body);
  p.frames[0].clear();  // a slot's frames are those of the event it held
  p.frames[1].clear();
  p.key.assign(event.key);
  ++stats_.events;
  ++untold_;
  if (watchers_.empty()) {
    untold_ = 0;  // kept for Last-Event-ID only
    // Nobody came back: events go off, and with them their cost.
    if (clock_.now_ms() - idle_since_ >= options_.linger_ms) deactivate();
    return;
  }
  if (!options_.later) {
    tell();
  } else if (untold_ == 1) {
    options_.later();  // the first of a batch
  }
}

void EventBus::tell() {
  if (untold_ == 0) return;
  const std::size_t n = untold_;
  untold_ = 0;
  batch_.events_.clear();
  for (std::size_t i = window_.size() - n; i < window_.size(); ++i)
    batch_.events_.push_back(&window_[i]);
  for (bool& made : batch_.made_) made = false;
  const std::uint64_t first = batch_.events_.front()->id;
  telling_ = true;
  // By index: a watcher told here may start another watch (it never does today, but a push
  // into watchers_ must not invalidate the loop).
  for (std::size_t i = 0; i < watchers_.size(); ++i) {
    // A watcher waiting for events to flow hears what it missed when they do.
    if (watchers_[i].watcher == nullptr || watchers_[i].waits_for_ready) continue;
    const Entry& e = watchers_[i];
    if (e.from_id < first && e.prefix.empty() && service_.may_read_all(*e.principal)) {
      stats_.sent += n;
      e.watcher->on_events(batch_);
      continue;
    }
    for (const Published* p : batch_.events_) {
      if (watchers_[i].watcher == nullptr) break;  // it fell behind
      if (p->id <= watchers_[i].from_id || !sees(watchers_[i], *p)) continue;
      ++stats_.sent;
      watchers_[i].watcher->on_event(*p);
    }
  }
  telling_ = false;
  compact();
  for (const Published* p : batch_.events_) {
    p->frames[0] = std::string();  // the window keeps the JSON only
    p->frames[1] = std::string();
  }
}

}  // namespace holdfast::events
