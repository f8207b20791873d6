// What fans out to many connections: lock events and pub/sub.
//
// (k) `watchers`: the pairs of (a) at `watch_pairs_connections` connections on Holdfast, once
//     with no lock-event watcher and once with `watchers` LOCK.WATCH connections that read
//     every event, in the same rounds: the ratio is what watching costs the lock path. The
//     watchers are read by a thread of their own (Watchers below), as separate client
//     processes would read them; its CPU counts as the client's.
// (l) `publish`: PUBLISH to `subscribers` subscribers of one channel, on Holdfast and Redis in
//     the same rounds: one publisher connection keeps `publish_depth` PUBLISHes in flight, the
//     subscribers read, and the figure is the messages the subscribers received per second.
//     Each message frame has the same size on both servers (RESP2 `message` frames of a
//     32-byte payload), so the bytes read tell how many arrived.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "measurement.h"
#include "target.h"

namespace holdfast::bench {

// The lock-event readers of (k).
enum class Readers {
  kWatches,  // LOCK.WATCH connections that read everything that comes
  kStreams,  // `GET /v1/events` connections that read everything that comes
  kStalled,  // LOCK.WATCH connections that never read a byte after the confirmation
};

// `count` lock-event readers of `target`, on a thread of their own, until destroyed. It also
// reads the server's holdfast_events_total and holdfast_event_watchers_dropped_total when it
// starts, so that events_made() and dropped() tell what the server did meanwhile (with count 0
// too: the path with nobody watching). `open_after_s`: the connections open that long after
// this starts (a window's warm-up, so that the window sees a reader's whole life), else at once.
// Throws std::runtime_error when a connection, its request or the metrics fail (a connection
// opened later: from events_made()).
class Watchers {
 public:
  Watchers(const Target& target, int count, Readers kind = Readers::kWatches,
           double open_after_s = 0);
  ~Watchers();
  Watchers(const Watchers&) = delete;
  Watchers& operator=(const Watchers&) = delete;
  // Bytes read so far, over every connection.
  std::uint64_t bytes() const { return bytes_; }
  // Events the server made since this began.
  std::int64_t events_made() const;
  // Watchers the server cut off for falling behind since this began.
  std::int64_t dropped() const;

 private:
  void open(int count);
  void run();
  // Until stop_: false when the destructor woke it.
  bool sleep_for(double seconds);

  std::uint16_t http_port_;
  std::uint16_t resp_port_;
  Readers kind_;
  std::int64_t events_at_start_ = 0, dropped_at_start_ = 0;
  std::vector<int> fds_;
  std::string open_error_;  // set by the thread before it ends; read after open_done_
  std::atomic<bool> open_done_{true};
  int wake_fd_ = -1;
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct PublishShape {
  int subscribers = 100;
  int depth = 16;  // PUBLISHes in flight on the publisher connection
  double warmup_s = 0.3;
  double duration_s = 2;
};

struct PublishResult {
  std::string target;
  PublishShape shape;
  double seconds = 0;
  std::uint64_t published = 0;  // PUBLISH replies received in the windows
  std::uint64_t delivered = 0;  // messages the subscribers received in the windows
  std::uint64_t counted = 0;    // the sum of PUBLISH's answers (receivers per message)
  double server_cpu_s = 0, client_cpu_s = 0;
  std::vector<double> window_rates;  // delivered per second, one per window
  bool failed = false;
  std::string failure;

  double delivered_per_sec() const {
    return seconds > 0 ? static_cast<double>(delivered) / seconds : 0;
  }
  double server_us_per_message() const {
    return delivered > 0 ? 1e6 * server_cpu_s / static_cast<double>(delivered) : 0;
  }
};

// One window of (l) on `target`, added to `total` (the caller interleaves targets by rounds).
void publish_window(Target& target, const PublishShape& shape, PublishResult& total);

}  // namespace holdfast::bench
