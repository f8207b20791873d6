// CallRunner: the life of one connection's calls into the LockService, written once for the
// RESP connection and the HTTP session.
//
//  1. issue(): the front end has parsed a request into a service call; the runner records it
//     (which command, when) and passes itself to the service as the call's Completion. The
//     first call in flight asks the front end to keep itself alive (the service holds a plain
//     reference until the call finishes).
//  2. The service finishes calls in issue order (lock_service.h). finish() pops the oldest
//     record, times it for /metrics and hands the answer to the front end to render; a reply
//     the front end made itself while calls were in flight (note_local()) follows the call
//     before it, so replies leave in the order the requests came.
//  3. After a call the service answered kWaiting, ready() is false until it finishes: a
//     blocked command blocks its connection, as in Redis. The front end resumes reading its
//     input when told (Host::resume()).
//  4. end(): the connection is gone; the service ends its session once. Answers still to come
//     are dropped, and the front end is let go after the last one.
//
// Nothing here allocates per call: the records are a ring of small values that keeps its size.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "server/metrics.h"
#include "service/lock_service.h"

namespace holdfast {

class CallRunner final : public Completion {
 public:
  // The front end's side.
  class Host {
   public:
    // The answer of the oldest call in flight, issued for `command`.
    virtual void answer(std::uint16_t command, Result<Answer> result) = 0;
    // The next `bytes` of the front end's own replies, held back by note_local(), may go.
    virtual void release_local(std::size_t bytes) = 0;
    // The call that blocked the connection finished: read and run requests again. Called from
    // inside finish(); the host should continue from the loop, not from here.
    virtual void resume() = 0;
    // Calls are in flight (true) or none are left (false): hold a reference to yourself while
    // they are, and let go from the loop, not from inside this call.
    virtual void keep_alive(bool calls_in_flight) = 0;

   protected:
    ~Host() = default;
  };

  // `metrics` may be null; command ids are metric ids.
  CallRunner(LockService& service, Host& host, Metrics* metrics, SessionId session)
      : service_(service), host_(host), metrics_(metrics), session_(session) {}

  SessionId session() const { return session_; }
  LockService& service() { return service_; }
  // A call may be issued now: nothing is waiting and the connection has not ended.
  bool ready() const { return !waiting_ && !ended_; }
  bool in_flight() const { return calls_ > 0; }
  bool waiting() const { return waiting_; }

  // Issues one call: `call(service, completion)` calls the service and returns its Issued.
  // `started` is when the command arrived (the latency metric counts from it).
  template <typename Call>
  void issue(std::uint16_t command, Call&& call,
             std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now()) {
    push(Record{started, 0, command, true});
    ++calls_;
    const std::uint64_t mine = ++issued_;
    if (call(service_, static_cast<Completion&>(*this)) == Issued::kWaiting && finished_ < mine) {
      waiting_ = true;
      waiting_for_ = mine;
    }
    // Only a call that did not finish inside the service needs the host kept alive: most
    // finish at once, and they cost no reference.
    if (calls_ > 0 && !kept_alive_) {
      kept_alive_ = true;
      host_.keep_alive(true);
    }
  }

  // The front end made a reply of `bytes` itself while calls are in flight (check in_flight()
  // first): it waits in the front end's buffer until release_local() says it may go.
  void note_local(std::size_t bytes) { push(Record{{}, bytes, 0, false}); }

  void finish(Result<Answer> result) override;

  // The connection is gone: the service ends its session (once).
  void end();

 private:
  struct Record {
    std::chrono::steady_clock::time_point started;
    std::size_t local_bytes;  // a local reply: its size
    std::uint16_t command;
    bool call;
  };
  void push(Record record);
  Record pop();

  LockService& service_;
  Host& host_;
  Metrics* metrics_;
  const SessionId session_;
  std::vector<Record> ring_;
  std::size_t head_ = 0, size_ = 0;
  std::size_t calls_ = 0;
  std::uint64_t issued_ = 0, finished_ = 0, waiting_for_ = 0;
  bool waiting_ = false;
  bool ended_ = false;
  bool kept_alive_ = false;
};

}  // namespace holdfast
