#include "server/pubsub/registry.h"

#include <algorithm>

#include "core/glob.h"
#include "server/resp/codec.h"

namespace holdfast::pubsub {
namespace {

bool add(std::vector<Subscriber*>& list, Subscriber& s) {
  if (std::find(list.begin(), list.end(), &s) != list.end()) return false;
  list.push_back(&s);
  return true;
}

bool remove(std::vector<Subscriber*>& list, Subscriber& s) {
  auto it = std::find(list.begin(), list.end(), &s);
  if (it == list.end()) return false;
  list.erase(it);  // keeps the others in the order they subscribed
  return true;
}

// A frame in both protocol versions, written when first needed.
class Frames {
 public:
  Frames(std::string_view kind, std::string_view pattern, std::string_view channel,
         std::string_view message)
      : kind_(kind), pattern_(pattern), channel_(channel), message_(message) {}
  std::string_view get(int proto) {
    std::string& f = proto >= 3 ? resp3_ : resp2_;
    if (f.empty()) {
      f.reserve(message_.size() + channel_.size() + pattern_.size() + 48);
      resp::ReplyWriter w(f, proto);
      w.push(pattern_.empty() ? 3 : 4);
      w.bulk(kind_);
      if (!pattern_.empty()) w.bulk(pattern_);
      w.bulk(channel_);
      w.bulk(message_);
    }
    return f;
  }

 private:
  std::string_view kind_, pattern_, channel_, message_;
  std::string resp2_, resp3_;
};

}  // namespace

bool Registry::subscribe(Subscriber& s, std::string_view channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) it = channels_.emplace(std::string(channel), 0).first;
  if (!add(it->second, s)) return false;
  ++subscriptions_;
  return true;
}

bool Registry::unsubscribe(Subscriber& s, std::string_view channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || !remove(it->second, s)) return false;
  if (it->second.empty()) channels_.erase(it);
  --subscriptions_;
  return true;
}

bool Registry::psubscribe(Subscriber& s, std::string_view pattern) {
  auto it = std::find_if(patterns_.begin(), patterns_.end(),
                         [&](const PatternEntry& p) { return p.pattern == pattern; });
  if (it == patterns_.end()) {
    patterns_.push_back(PatternEntry{std::string(pattern), {}});
    it = patterns_.end() - 1;
  }
  if (!add(it->subscribers, s)) return false;
  ++subscriptions_;
  return true;
}

bool Registry::punsubscribe(Subscriber& s, std::string_view pattern) {
  auto it = std::find_if(patterns_.begin(), patterns_.end(),
                         [&](const PatternEntry& p) { return p.pattern == pattern; });
  if (it == patterns_.end() || !remove(it->subscribers, s)) return false;
  if (it->subscribers.empty()) patterns_.erase(it);
  --subscriptions_;
  return true;
}

std::int64_t Registry::publish(std::string_view channel, std::string_view message) {
  const std::int64_t n = deliver(channel, message);
  if (relay_) relay_(channel, message);
  return n;
}

std::int64_t Registry::deliver(std::string_view channel, std::string_view message) {
  ++stats_.messages;
  std::int64_t n = 0;
  if (auto it = channels_.find(channel); it != channels_.end()) {
    Frames frames("message", {}, channel, message);
    for (Subscriber* s : it->second) s->on_message(frames.get(s->proto()));
    n += static_cast<std::int64_t>(it->second.size());
  }
  for (const PatternEntry& p : patterns_) {
    if (!glob_match(p.pattern, channel)) continue;
    Frames frames("pmessage", p.pattern, channel, message);
    for (Subscriber* s : p.subscribers) s->on_message(frames.get(s->proto()));
    n += static_cast<std::int64_t>(p.subscribers.size());
  }
  stats_.deliveries += static_cast<std::uint64_t>(n);
  return n;
}

std::vector<std::string> Registry::channels(std::string_view pattern) const {
  std::vector<std::string> out;
  for (const auto& [name, subscribers] : channels_)
    if (pattern.empty() || glob_match(pattern, name)) out.push_back(name);
  return out;
}

std::size_t Registry::numsub(std::string_view channel) const {
  auto it = channels_.find(channel);
  return it == channels_.end() ? 0 : it->second.size();
}

PubSubStats Registry::stats() const {
  PubSubStats s = stats_;
  s.channels = channels_.size();
  s.patterns = patterns_.size();
  s.subscriptions = subscriptions_;
  return s;
}

}  // namespace holdfast::pubsub
