// EventQueue: the single server's lock events whose changes the log has not made durable yet,
// oldest first. A watcher must never hear of a change a crash could take back, so each event
// waits for the log sequence of its change (EmbeddedBackend::release_events).
//
// The events wait written out already (append_event_body), one after another in one block of
// text: an event is written once, where it happens, and nothing is copied, moved or freed per
// event while it waits. The block is emptied once every event in it was told, and its told
// start is cut off when it is mostly told.
//
// On the event loop thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/lock_event.h"

namespace holdfast {

class EventQueue {
 public:
  bool empty() const { return head_ == records_.size(); }
  std::size_t size() const { return records_.size() - head_; }
  void clear();

  // Writes `event` at the end; it waits for the log to be durable up to `sequence`.
  void push(std::uint64_t sequence, const LockEventView& event);

  // The oldest (not empty()): its sequence, and the event (valid until the next push, pop or
  // clear).
  std::uint64_t front_sequence() const { return records_[head_].sequence; }
  WrittenEvent front() const;
  void pop();

 private:
  struct Record {
    std::uint64_t sequence = 0;
    std::size_t at = 0;  // where its key starts in text_; its body follows the key
    std::uint32_t key_size = 0;
    std::uint32_t body_size = 0;
    LockEventKind kind = LockEventKind::kAcquired;
  };
  // Once this many events are told and they are at least half the queue, they are cut off.
  static constexpr std::size_t kCutAfter = 1024;

  std::string text_;
  std::vector<Record> records_;
  std::size_t head_ = 0;  // the oldest untold record
};

}  // namespace holdfast
