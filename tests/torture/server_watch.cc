#include "torture/server_watch.h"

#include <signal.h>

#include <atomic>
#include <chrono>

namespace holdfast::torture {
namespace {

constexpr std::size_t kTailLines = 20;

}  // namespace

ServerWatch::ServerWatch(testing::ServerProcess& server)
    : server_(server), thread_([this] { run(); }) {}

ServerWatch::~ServerWatch() {
  stopping_ = true;
  thread_.join();
}

void ServerWatch::run() {
  while (!stopping_) {
    {
      std::lock_guard lock(mu_);
      const std::string text = server_.drain_output(/*timeout_ms=*/5, /*max_lines=*/1000);
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t nl = text.find('\n', at);
        tail_.push_back(text.substr(at, nl - at));
        if (tail_.size() > kTailLines) tail_.pop_front();
        ++lines_;
        at = nl == std::string::npos ? text.size() : nl + 1;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::int64_t ServerWatch::lines() const {
  std::lock_guard lock(mu_);
  return lines_;
}

std::string ServerWatch::tail() const {
  std::lock_guard lock(mu_);
  std::string text;
  for (const std::string& line : tail_) text += "    | " + line + "\n";
  return text;
}

void stop_server(ServerWatch& watch, History& history) {
  const pid_t pid = watch.with([](testing::ServerProcess& s) { return s.pid(); });
  std::atomic<bool> stopped{false};
  std::atomic<bool> killed{false};
  std::thread guard([&] {
    for (int i = 0; i < 100 && !stopped; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!stopped) {
      killed = true;
      ::kill(pid, SIGKILL);
    }
  });
  const int code = watch.with([](testing::ServerProcess& s) { return s.stop(); });
  stopped = true;
  guard.join();
  if (killed) {
    history.violation("the server did not stop within 10 s of SIGTERM");
  } else if (code != 0) {
    history.violation("the server exited with " + std::to_string(code) + " on SIGTERM");
  }
}

}  // namespace holdfast::torture
