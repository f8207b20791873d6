// Pipeline: one RESP connection's commands, without its socket. The connection
// (connection.h) feeds it parsed commands and sends what it puts in output(); the command
// fuzzer drives it the same way with no socket at all.
//
// run() answers what the front end decides on its own (an unknown command, a wrong arity,
// a command before AUTH, a connection command) and issues lock commands to the LockService
// through a CallRunner. Replies land in output() in the order the commands came, whether a
// call finished at once, after the log, after a queue or after the database: a reply made
// here while calls are in flight waits behind them. When an answer arrives outside run(),
// Events::replies_ready() says so.
//
// Pub/sub messages and lock events reach the connection through its Subscriptions
// (subscriptions.h) as push frames; a RESP2 connection that subscribed runs only the commands
// Redis allows in that state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/call_runner.h"
#include "server/metrics.h"
#include "server/resp/commands.h"
#include "server/resp/subscriptions.h"

namespace holdfast::resp {

class Pipeline final : private CallRunner::Host, private Subscriptions::Output {
 public:
  // The connection's side.
  class Events {
   public:
    // output() grew outside run(): send it.
    virtual void replies_ready() = 0;
    // output() grew outside run() with pushes that may wait a moment to go out together (lock
    // events): send it soon, or now when there is much of it.
    virtual void pushes_ready() { replies_ready(); }
    // The command that blocked the connection finished: run more (from the loop).
    virtual void resume() = 0;
    // Calls are in flight (true) or none are left (false): stay alive while they are; let go
    // from the loop, not from inside this call.
    virtual void keep_alive(bool calls_in_flight) = 0;
    // Bytes the connection took from output() and has not sent yet.
    virtual std::size_t unsent_bytes() const { return 0; }
    // Lock events shared with other watchers, to be sent after what the connection is writing
    // and before output() (which is empty when this is called): true when the connection keeps
    // them so; false to have them copied into output() instead.
    virtual bool share(const events::SharedText&) { return false; }
    // A subscriber or watcher fell behind (subscriptions.h); output() now holds only its last
    // frame, if any. Read nothing more and close: at once (a subscriber past its limit, as
    // Redis does), or once output() is sent (a watcher's last frame), but soon if the peer
    // reads nothing. Not from inside this call.
    virtual void fell_behind(bool at_once) { (void)at_once; }

   protected:
    ~Events() = default;
  };

  struct Env {
    LockService& service;
    const ServerInfo& info;
    const Authenticator* auth = nullptr;  // null in local open mode
    Metrics* metrics = nullptr;           // command i of command_table() is metric id i
    script::Engine* scripts = nullptr;    // EVAL, EVALSHA, SCRIPT; null: scripts are off
    pubsub::Registry* pubsub = nullptr;   // pub/sub; null: the commands answer an error
    events::EventBus* events = nullptr;   // LOCK.WATCH; null: the command answers an error
    FanoutLimits limits{};                // what a subscriber or watcher may leave unread
  };

  // `clients` (may be null) is what CLIENT LIST and CLIENT KILL see of the other connections.
  Pipeline(const Env& env, SessionId id, Events& events, ClientDirectory* clients = nullptr);

  // Runs one parsed command (args[0] is its name; args may point into the caller's buffer
  // only for the duration of the call). REQUIRES: ready().
  Flow run(std::span<const std::string_view> args);
  // Another command may run now: no blocking call is waiting, no transaction is still running
  // (see drain()) and the connection is open.
  bool ready() const { return runner_.ready() && !executing_; }
  // Runs what is left of a transaction (EXEC) while it can; call before feeding run() more.
  // A call of the transaction that waits (on a node over PostgreSQL, a database round trip)
  // stops it until that call finishes and Events::resume() says so.
  void drain();
  // Calls whose replies are still to come.
  bool in_flight() const { return runner_.in_flight(); }
  // An error line of the connection's own (a protocol error), after every reply before it.
  void error_line(std::string_view line);
  // Replies that may leave now, in order; the caller takes what it sends.
  std::string& output() { return out_; }
  const std::string& output() const { return out_; }
  // The connection is gone: its session ends in the service, its subscriptions and watch end;
  // later answers are dropped.
  void end() {
    subs_.end();
    runner_.end();
  }
  const Subscriptions& subscriptions() const { return subs_; }

  ConnectionState& state() { return state_; }
  // The TLS handshake verified a client certificate that names `caller` (certCommonName):
  // the connection is that caller until AUTH says otherwise. Before the first command.
  void sign_in_by_certificate(Principal caller);

 private:
  void answer(std::uint16_t command, Result<Answer> result) override;
  void release_local(std::size_t bytes) override;
  void resume() override { events_.resume(); }
  void keep_alive(bool calls_in_flight) override { events_.keep_alive(calls_in_flight); }
  // Subscriptions::Output.
  int protocol() const override { return state_.proto; }
  void push_frame(std::string_view frame, bool can_wait) override;
  void push_shared(const events::SharedText& frames) override;
  std::size_t backlog() const override {
    return out_.size() + (held_.size() - held_begin_) + events_.unsent_bytes();
  }
  void fell_behind(std::string_view last) override;

  // Where a reply made here goes: output() when nothing is in flight, else held back.
  std::string& local_buffer() { return runner_.in_flight() ? held_ : out_; }
  // After writing `before` bytes into local_buffer(): note what was held back.
  void held_from(std::size_t before);

  // One command: answered here, issued, or (inside MULTI) queued. `in_transaction`: run by EXEC.
  Flow run_one(std::span<const std::string_view> args, bool in_transaction);
  // The row that runs `args` (a subcommand's for a container), or null with the error written.
  const CommandSpec* resolve(const CommandSpec* spec, std::span<const std::string_view>& rest,
                             std::string_view name, ReplyWriter& out);
  // Runs a connection command (`spec` is its row, a subcommand's for a container).
  Flow run_local(const CommandSpec& spec, std::span<const std::string_view> args, ReplyWriter& out);
  // Reads a lock command's arguments (read_call_args()); false when its options are refused
  // (the error is written).
  static bool read_options(const CommandSpec& spec, std::span<const std::string_view> args,
                           std::span<const std::string_view>& positional, OptionValues& values,
                           ReplyWriter& out);
  // Issues a lock command's call; false when its options are refused (the error is written).
  bool issue(const CommandSpec& spec, std::span<const std::string_view> args, ReplyWriter& out,
             bool in_transaction);
  // Inside MULTI: checks the command and keeps it (+QUEUED), or refuses it and marks the
  // transaction so EXEC aborts.
  void queue(const CommandSpec* row, std::span<const std::string_view> args, ReplyWriter& out);
  // EXEC: the array header, then the queued commands (drain()).
  void start_exec(ReplyWriter& out);
  // Runs EXEC's queued commands while no call of this connection waits.
  void run_queued();
  // The transaction is over (run to its end, or discarded).
  void end_exec();

  const Env& env_;
  Events& events_;
  ClientDirectory* clients_;
  ConnectionState state_;
  Subscriptions subs_;
  CallRunner runner_;
  std::string out_;
  std::string held_;  // replies made here behind calls in flight, oldest first
  std::size_t held_begin_ = 0;
  bool running_ = false;  // inside run(): the caller sends output() when it returns
  // EXEC's commands still to run, oldest first.
  std::vector<std::vector<std::string>> exec_queue_;
  std::size_t exec_next_ = 0;
  bool executing_ = false;
  std::size_t exec_mark_ = 0;  // where EXEC's reply begins in out_ (nothing was in flight)
};

}  // namespace holdfast::resp
