// The contended load the faults land in: several workers, each on its own connection, take a
// few keys with LOCK.ACQUIRE and short leases, write to the fenced resource while their lease
// runs, and LOCK.RELEASE. They ride out every fault as a careful client would: a broken
// connection is reopened, a refusal is retried after a pause. With several servers (the nodes
// of a cluster) worker i talks to server i modulo their number. What they see goes to the
// History (holds, violations, which server granted when) and to the counters below.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "torture/fenced_resource.h"
#include "torture/history.h"

namespace holdfast::torture {

struct LoadOptions {
  std::vector<int> ports;  // the servers' RESP ports
  int workers = 6;
  std::vector<std::string> keys;
  std::int64_t ttl_ms = 800;
  std::int64_t max_section_ms = 10;  // how long a holder works between grant and release
  unsigned seed = 1;
};

class Load {
 public:
  Load(LoadOptions options, History& history, FencedResource& resource);
  ~Load();  // stops the workers

  void stop();
  // Error replies by code, and "connection lost" for broken connections.
  std::map<std::string, std::int64_t> errors() const;
  std::int64_t grants() const { return grants_.load(); }

 private:
  void run(int id);
  void count_error(const std::string& what);

  const LoadOptions options_;
  History& history_;
  FencedResource& resource_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> grants_{0};
  mutable std::mutex mu_;
  std::map<std::string, std::int64_t> errors_;
  std::vector<std::thread> threads_;
};

}  // namespace holdfast::torture
