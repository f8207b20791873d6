#include "service/embedded/event_queue.h"

namespace holdfast {

void EventQueue::clear() {
  text_.clear();
  records_.clear();
  head_ = 0;
}

void EventQueue::push(std::uint64_t sequence, const LockEventView& event) {
  Record r;
  r.sequence = sequence;
  r.at = text_.size();
  r.key_size = static_cast<std::uint32_t>(event.key.size());
  r.kind = event.kind;
  text_.append(event.key);
  append_event_body(text_, event);
  r.body_size = static_cast<std::uint32_t>(text_.size() - r.at - r.key_size);
  records_.push_back(r);
}

WrittenEvent EventQueue::front() const {
  const Record& r = records_[head_];
  const std::string_view text(text_);
  return {r.kind, text.substr(r.at, r.key_size), text.substr(r.at + r.key_size, r.body_size)};
}

void EventQueue::pop() {
  if (++head_ == records_.size()) {
    clear();  // all told: the block is written again from its start, its memory kept
    return;
  }
  if (head_ < kCutAfter || 2 * head_ < records_.size()) return;
  // Events keep coming while the oldest wait (a log that syncs to disk): the told ones are cut
  // off, so the block does not grow for as long as the queue is never quite empty.
  const std::size_t cut = records_[head_].at;
  text_.erase(0, cut);
  records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(head_));
  head_ = 0;
  for (Record& r : records_) r.at -= cut;
}

}  // namespace holdfast
