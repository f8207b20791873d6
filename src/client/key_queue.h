// The local per-key queue: callers of one Client that want the same key line up here first,
// so the process has at most one acquire request per key in flight at the server (N threads
// on one key cost the server one waiter, not N, and the server's FIFO stays meaningful across
// processes).
//
// 1. wait_turn(key, deadline) queues the caller FIFO behind the other callers of that key and
//    returns a Turn once it is first and the key's turn is free; nullopt when the deadline
//    passes first (the caller leaves the queue). try_turn() does not wait.
// 2. The Turn is held while the request is in flight; with_lock holds it for its whole scope,
//    so the next local caller asks the server only after the scope released the key.
// 3. Dropping the Turn hands the key's turn to the next caller in line. An entry exists only
//    while someone holds or waits for the key's turn.
//
// in_flight(key) counts acquire requests actually at the server, per key, and remembers the
// highest count ever seen: the observable proof of the guarantee (ClientStats).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace holdfast::inline v0::client_internal {

class KeyQueue {
 public:
  class Turn {
   public:
    Turn(Turn&& other) noexcept : queue_(other.queue_), key_(std::move(other.key_)) {
      other.queue_ = nullptr;
    }
    Turn& operator=(Turn&&) = delete;
    Turn(const Turn&) = delete;
    ~Turn();

   private:
    friend class KeyQueue;
    Turn(KeyQueue* queue, std::string key) : queue_(queue), key_(std::move(key)) {}
    KeyQueue* queue_;
    std::string key_;
  };

  // Counts one acquire request at the server for a key while it lives.
  class InFlight {
   public:
    InFlight(InFlight&& other) noexcept : queue_(other.queue_), key_(std::move(other.key_)) {
      other.queue_ = nullptr;
    }
    InFlight& operator=(InFlight&&) = delete;
    InFlight(const InFlight&) = delete;
    ~InFlight();

   private:
    friend class KeyQueue;
    InFlight(KeyQueue* queue, std::string key) : queue_(queue), key_(std::move(key)) {}
    KeyQueue* queue_;
    std::string key_;
  };

  // Waits for the key's turn until `deadline`; nullopt if it passed first.
  std::optional<Turn> wait_turn(const std::string& key,
                                std::chrono::steady_clock::time_point deadline);
  // The key's turn if nobody of this process holds or waits for it; nullopt otherwise.
  std::optional<Turn> try_turn(const std::string& key);
  InFlight in_flight(const std::string& key);

  std::size_t waiting() const;                // callers now waiting, all keys
  std::size_t max_in_flight_per_key() const;  // high-water mark of in_flight() for any one key

 private:
  struct Entry {
    bool taken = false;
    std::list<std::uint64_t> line;  // waiting callers' tickets, oldest first
    std::condition_variable changed;
    std::size_t in_flight = 0;
  };
  void finish_turn(const std::string& key);
  void finish_in_flight(const std::string& key);
  void erase_if_unused(std::map<std::string, std::unique_ptr<Entry>>::iterator it);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
  std::uint64_t next_ticket_ = 0;
  std::size_t waiting_ = 0;
  std::size_t max_in_flight_ = 0;
};

}  // namespace holdfast::inline v0::client_internal
