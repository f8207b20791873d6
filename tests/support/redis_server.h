// A real redis-server for a test: on a free port, in a private directory, without persistence
// (--save "" --appendonly no), started at construction (it answers PING before the
// constructor returns) and stopped by the destructor.
#pragma once

#include "support/process.h"
#include "support/resp_client.h"

namespace holdfast::testing {

class RedisServer {
 public:
  RedisServer();
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  int port() const { return port_; }
  RespClient client() const { return RespClient::tcp(port_); }

 private:
  TempDir dir_;
  Child child_;
  int port_ = 0;
};

}  // namespace holdfast::testing
