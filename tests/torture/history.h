// What the torture program's clients saw: every hold, from the grant's answer to the moment
// the holder gave the key up, and the violations found along the way. check() then looks at
// the holds of each key together:
//  1. tokens only grow: ordered by the server's acquiredAt, a key's tokens strictly increase
//     (and no token is granted twice);
//  2. no two holds of a key overlap in time. A hold starts when its grant's answer arrives and
//     ends when the holder sent its release, or at its lease end when the release could not
//     have taken effect (the connection was already gone, or the release was refused with
//     STORE_UNAVAILABLE, which changes nothing); never after its lease end, when the server
//     frees the key by itself. A grant answered after its lease ended holds nothing.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace holdfast::torture {

struct Hold {
  std::string key;
  std::int64_t token = 0;
  std::int64_t acquired_at_ms = 0;  // the server's acquiredAt
  std::int64_t lease_end_ms = 0;    // the server's leaseExpiresAt
  std::int64_t start_us = 0;        // the grant's answer arrived
  std::int64_t end_us = 0;          // given up (see above)
};

class History {
 public:
  // A grant's answer arrived on `key` at `at_us` from server `server` (the start of recovery
  // measurements).
  void granted(const std::string& key, std::int64_t at_us, int server = 0);
  void add(Hold hold);
  void violation(std::string what);

  // The first grant on `key` answered after `after_us`, if any yet.
  std::optional<std::int64_t> first_grant_after(const std::string& key,
                                                std::int64_t after_us) const;
  // The first grant of any key answered by `server` after `after_us`, if any yet.
  std::optional<std::int64_t> first_grant_on(int server, std::int64_t after_us) const;

  struct Findings {
    std::int64_t holds = 0;
    std::int64_t empty_holds = 0;     // grants answered after their lease ended
    std::int64_t max_overlap_us = 0;  // 0 when no two holds of a key overlapped
    // How long after the server's acquiredAt the grant's answer arrived: the part of the
    // lease a holder never had (a slow or failing disk holds answers back).
    std::int64_t answer_delay_p50_ms = 0;
    std::int64_t answer_delay_max_ms = 0;
    std::vector<std::string> violations;
  };
  // Runs the checks above over every hold so far, with the violations recorded meanwhile.
  Findings check() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::int64_t>> grants_;  // per key, in arrival order
  std::map<int, std::vector<std::int64_t>> by_server_;       // per server, in arrival order
  std::vector<Hold> holds_;
  std::vector<std::string> violations_;
};

}  // namespace holdfast::torture
