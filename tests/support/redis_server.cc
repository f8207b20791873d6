#include "support/redis_server.h"

#include <signal.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace holdfast::testing {

RedisServer::RedisServer() : port_(free_port()) {
  child_ = Child::start({HOLDFAST_REDIS_SERVER_BIN, "--port", std::to_string(port_), "--bind",
                         "127.0.0.1", "--dir", dir_.path(), "--save", "", "--appendonly", "no"});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      RespClient client = RespClient::tcp(port_);
      if (client.call({"PING"}, 2000).str == "PONG") return;
    } catch (const std::exception&) {
      // not listening yet
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("redis-server did not answer PING on port " + std::to_string(port_));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

RedisServer::~RedisServer() {
  if (child_.running()) {
    child_.signal(SIGTERM);
    child_.wait();
  }
}

}  // namespace holdfast::testing
