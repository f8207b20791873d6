// Holds that must outlive every fault: on each server, keepers that take one key each for the
// whole run (half of them session holds, whose connection stays open, half long leases renewed
// every half second), and a thief that keeps trying those keys through the other servers.
//  - A session hold is kept for as long as its keeper's connection is open and its server
//    lives: the thief taking the key meanwhile, or a renewal answering that the hold is gone,
//    is a lost session hold.
//  - A lease is kept until the end its last acknowledged grant or renewal gave it: the thief
//    taking the key before then, or a renewal answering lease_lost before then, is a lost lease.
// A renewal the server could not make (STORE_UNAVAILABLE, UNAVAILABLE) changes nothing the
// keeper relies on; a keeper whose connection broke starts again with a new grant (a session
// hold ends with its connection).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "torture/history.h"

namespace holdfast::torture {

struct KeeperOptions {
  std::vector<int> ports;  // one entry per server
  int per_server = 2;      // keepers per server: session and lease in turn
  std::int64_t lease_ttl_ms = 20'000;
  std::int64_t session_ttl_ms = 600'000;
};

class Keepers {
 public:
  Keepers(KeeperOptions options, History& history);
  ~Keepers();  // stops: every keeper releases its key

  void stop();
  struct Counts {
    std::int64_t session_holds = 0;  // grants to session keepers
    std::int64_t leases = 0;         // grants to lease keepers
    std::int64_t renewals = 0;
    std::int64_t thefts_tried = 0;
    std::int64_t lost = 0;  // holds lost (each a violation)
  };
  Counts counts() const;

 private:
  struct Keeper {
    std::string key;
    int server = 0;
    bool session = false;
    // Under mu_: the keeper holds the key, and (lease) until when by its acknowledged answers.
    bool holding = false;
    std::int64_t believed_end_ms = 0;
  };
  void keep(std::size_t index);
  void steal();
  void lost(const std::string& what);

  const KeeperOptions options_;
  History& history_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<Keeper> keepers_;
  Counts counts_;
  std::vector<std::thread> threads_;
};

}  // namespace holdfast::torture
