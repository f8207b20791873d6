// The signals of a command that holds a lock while it waits (`locks acquire --session`, `locks
// run`), turned into events that its main thread waits for beside the work of other threads.
//
// The signals are blocked rather than handled: the thread that constructs the watch blocks
// them, every thread started after that inherits the mask, so a signal stays pending until
// wait() reads it from a signalfd. Nothing runs in a signal handler, and a stop signal cannot
// end the process between a grant and its release.
#pragma once

#include <signal.h>

namespace holdfast::cli {

class SignalWatch {
 public:
  // What wait() saw.
  struct Event {
    enum Kind { kSignal, kWake } kind;
    int signal = 0;              // kSignal: its number
    bool from_terminal = false;  // kSignal: sent by the terminal (Ctrl-C) to the whole
                                 // foreground process group, a child of ours included
  };

  // Blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGCHLD in the calling thread.
  // REQUIRES: no other thread of the process is running yet (it would not block them).
  // Throws std::system_error when the signalfd or eventfd cannot be made.
  SignalWatch();
  // Restores the signal mask of the constructing thread.
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Blocks until one of the signals arrives or wake() is called.
  Event wait();
  // True if wake() was called since the last wait() that returned kWake; does not block.
  bool woken();
  // Makes wait() return kWake; callable from any thread.
  void wake();

  // The signal mask the process had before: what a child should start with.
  const sigset_t& original_mask() const { return original_; }
  // SIGINT, SIGTERM, SIGHUP and SIGQUIT: the signals that ask a command to stop.
  static bool is_stop_signal(int signal);

 private:
  sigset_t watched_{};
  sigset_t original_{};
  int signal_fd_ = -1;
  int wake_fd_ = -1;
};

}  // namespace holdfast::cli
