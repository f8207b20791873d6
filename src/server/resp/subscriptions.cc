#include "server/resp/subscriptions.h"

#include <algorithm>

#include "server/resp/codec.h"

namespace holdfast::resp {
namespace {

bool erase(std::vector<std::string>& list, std::string_view item) {
  auto it = std::find(list.begin(), list.end(), item);
  if (it == list.end()) return false;
  list.erase(it);
  return true;
}

}  // namespace

void Subscriptions::subscribe(std::string_view channel) {
  if (registry_ == nullptr || !registry_->subscribe(*this, channel)) return;
  channels_.emplace_back(channel);
}

void Subscriptions::unsubscribe(std::string_view channel) {
  if (registry_ == nullptr || !registry_->unsubscribe(*this, channel)) return;
  erase(channels_, channel);
}

void Subscriptions::psubscribe(std::string_view pattern) {
  if (registry_ == nullptr || !registry_->psubscribe(*this, pattern)) return;
  patterns_.emplace_back(pattern);
}

void Subscriptions::punsubscribe(std::string_view pattern) {
  if (registry_ == nullptr || !registry_->punsubscribe(*this, pattern)) return;
  erase(patterns_, pattern);
}

bool Subscriptions::watch(std::string prefix) {
  if (bus_ == nullptr) return true;
  if (watching_) bus_->unwatch(*this);
  prefix_ = prefix;
  watching_ = true;
  bus_->watch(*this, principal_, std::move(prefix));
  confirm_pending_ = !bus_->ready();
  return !confirm_pending_;
}

void Subscriptions::write_confirmation(ReplyWriter& out, std::string_view kind,
                                       const std::string* prefix, std::size_t count) {
  out.push(3);
  out.bulk(kind);
  if (prefix != nullptr) {
    out.bulk(*prefix);
  } else {
    out.null();
  }
  out.integer(static_cast<std::int64_t>(count));
}

void Subscriptions::on_ready() {
  if (!confirm_pending_ || !watching_) return;
  confirm_pending_ = false;
  std::string frame;
  ReplyWriter w(frame, proto());
  write_confirmation(w, "lock.watch", &prefix_, count());
  out_.push_frame(frame);
}

void Subscriptions::unwatch() {
  confirm_pending_ = false;
  if (!watching_) return;
  bus_->unwatch(*this);
  watching_ = false;
  prefix_.clear();
}

void Subscriptions::end() {
  if (registry_ != nullptr) {
    for (const std::string& c : channels_) registry_->unsubscribe(*this, c);
    for (const std::string& p : patterns_) registry_->punsubscribe(*this, p);
  }
  channels_.clear();
  patterns_.clear();
  unwatch();
  soft_since_.reset();
}

void Subscriptions::on_message(std::string_view frame) {
  if (behind_) return;
  const std::size_t backlog = out_.backlog();
  bool over = backlog > limits_.pubsub_hard_bytes;
  if (!over && backlog > limits_.pubsub_soft_bytes) {
    const auto now = std::chrono::steady_clock::now();
    if (!soft_since_) soft_since_ = now;
    over = now - *soft_since_ >= limits_.pubsub_soft_time;
  } else if (backlog <= limits_.pubsub_soft_bytes) {
    soft_since_.reset();
  }
  if (over) {
    // Redis closes such a client at once; so does this, without another frame.
    behind_ = true;
    if (registry_ != nullptr) registry_->dropped();
    out_.fell_behind({});
    return;
  }
  out_.push_frame(frame);
}

void Subscriptions::append_event_frame(std::string& out, int proto,
                                       const events::Published& event) {
  ReplyWriter w(out, proto);
  w.push(3);
  w.bulk("lock.event");
  w.bulk(event_name(event.kind));
  w.bulk(event.json);
}

std::string Subscriptions::event_frame(int proto, const events::Published& event) {
  std::string f;
  f.reserve(event.json.size() + 48);
  append_event_frame(f, proto, event);
  return f;
}

std::string Subscriptions::reset_frame(int proto) {
  std::string f;
  ReplyWriter w(f, proto);
  w.push(3);
  w.bulk("lock.event");
  w.bulk("reset");
  w.bulk("{\"event\":\"reset\"}");
  return f;
}

void Subscriptions::on_reset(std::uint64_t) {
  if (!behind_) out_.push_frame(reset_frame(proto()));
}

bool Subscriptions::watch_behind() {
  if (behind_) return true;
  if (out_.backlog() <= limits_.watch_bytes) return false;
  behind_ = true;
  bus_->dropped();
  unwatch();
  out_.fell_behind(reset_frame(proto()));
  return true;
}

void Subscriptions::on_events(const events::Batch& batch) {
  if (watch_behind()) return;
  // Written once per batch and protocol version, for every watcher that sees all of it.
  const events::SharedText& frames =
      proto() >= 3
          ? batch.text(
                events::Batch::kResp3,
                [](std::string& out, const events::Published& e) { append_event_frame(out, 3, e); })
          : batch.text(events::Batch::kResp2, [](std::string& out, const events::Published& e) {
              append_event_frame(out, 2, e);
            });
  out_.push_shared(frames);
}

void Subscriptions::on_event(const events::Published& event) {
  if (watch_behind()) return;
  // Written once per event and protocol version, for every watcher of it.
  std::string& frame = event.frames[proto() >= 3 ? 1 : 0];
  if (frame.empty()) frame = event_frame(proto(), event);
  out_.push_frame(frame, /*can_wait=*/true);
}

}  // namespace holdfast::resp
