#include "options.h"

#include <charconv>
#include <sstream>

namespace holdfast::bench {
namespace {

// Room for a workload on two cores, not a hard limit of the harness.
constexpr int kMaxConnections = 4096;
constexpr int kMaxDepth = 1024;
constexpr double kMaxSeconds = 3600;

std::string range(const std::string& flag, const std::string& what, const std::string& lo,
                  const std::string& hi) {
  return flag + " needs " + what + " from " + lo + " to " + hi;
}

}  // namespace

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string parse_counts(const std::string& flag, const std::string& list, int lo, int hi,
                         std::vector<int>& out) {
  out.clear();
  const std::string need =
      range(flag, "a comma list of counts", std::to_string(lo), std::to_string(hi));
  for (const std::string& item : split(list)) {
    int value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size()) return need + ", not '" + item + "'";
    if (value < lo || value > hi) return need + ", not " + item;
    out.push_back(value);
  }
  if (out.empty()) return need + ", not '" + list + "'";
  return "";
}

std::string check_options(const SuiteOptions& o) {
  const std::string max_s = std::to_string(static_cast<int>(kMaxSeconds));
  if (!(o.duration_s > 0) || o.duration_s > kMaxSeconds)
    return range("--duration", "seconds", "more than 0", max_s);
  if (!(o.warmup_s >= 0) || o.warmup_s > kMaxSeconds)
    return range("--warmup", "seconds", "0", max_s);
  if (o.rounds < 1 || o.rounds > 100) return range("--rounds", "windows", "1", "100");
  if (o.keys < 1 || o.keys > 100'000'000) return range("--keys", "keys", "1", "100000000");
  if (o.hot_connections < 1 || o.hot_connections > kMaxConnections)
    return range("--hot-connections", "connections", "1", std::to_string(kMaxConnections));
  if (o.writer_every < 1 || o.writer_every > kMaxConnections)
    return range("--writer-every", "connections", "1", std::to_string(kMaxConnections));
  if (o.semaphore_permits < 1 || o.semaphore_permits > 1'000'000)
    return range("--semaphore-permits", "permits", "1", "1000000");
  if (o.depth < 1 || o.depth > kMaxDepth)
    return range("--depth", "requests in flight", "1", std::to_string(kMaxDepth));
  if (o.watchers < 1 || o.watchers > kMaxConnections)
    return range("--watchers", "connections", "1", std::to_string(kMaxConnections));
  if (o.watch_connections < 1 || o.watch_connections > kMaxConnections)
    return range("--watch-connections", "connections", "1", std::to_string(kMaxConnections));
  if (o.subscribers < 1 || o.subscribers > kMaxConnections)
    return range("--subscribers", "connections", "1", std::to_string(kMaxConnections));
  if (o.publish_depth < 1 || o.publish_depth > kMaxDepth)
    return range("--publish-depth", "messages in flight", "1", std::to_string(kMaxDepth));
  if (o.handoffs < 1 || o.handoffs > 100'000)
    return range("--handoffs", "hand-offs", "1", "100000");
  if (o.think_us < 0 || o.think_us > 10'000'000)
    return range("--think-us", "microseconds", "0", "10000000");
  if (o.memory_holds < 1 || o.memory_holds > 100'000'000)
    return range("--memory-holds", "holds", "1", "100000000");
  if (o.restart_holds < 1 || o.restart_holds > 100'000'000)
    return range("--restart-holds", "holds", "1", "100000000");
  if (o.idle.paced_windows < 1 || o.idle.paced_s / o.idle.paced_windows < 0.1)
    return "--paced-windows must be at least 1 and leave each window 0.1 s of --paced-seconds";
  if (o.backoff_min_us > o.backoff_max_us)
    return "--backoff-min-us must not exceed --backoff-max-us";
  return "";
}

}  // namespace holdfast::bench
