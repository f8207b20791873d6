// The protected resource of the fencing pattern, simulated in the torture program: a store that
// accepts a write on a key only if its token is at least the highest token it has accepted for
// that key. A holder writes only while its lease runs (by the server's leaseExpiresAt), so a
// refusal that happens before the writer's lease ends means the server handed out a newer
// token while an older lease was still running: a violation of mutual exclusion.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace holdfast::torture {

class FencedResource {
 public:
  struct Outcome {
    bool accepted = false;
    std::int64_t highest = 0;     // the highest token accepted for the key, before this write
    std::int64_t decided_us = 0;  // when the resource decided (wall clock, under its lock)
  };

  Outcome write(const std::string& key, std::int64_t token);
  // The highest token accepted for `key` so far (0: none).
  std::int64_t highest(const std::string& key) const;

  std::int64_t accepted() const;
  std::int64_t refused() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::int64_t> highest_;
  std::int64_t accepted_ = 0;
  std::int64_t refused_ = 0;
};

}  // namespace holdfast::torture
