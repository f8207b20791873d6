#include "torture/process_faults.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/resp_client.h"
#include "torture/wall_clock.h"

namespace holdfast::torture {
namespace {

// Connects, sends `bytes`, and closes with a reset (SO_LINGER 0): the server reads the bytes,
// if at all, then finds the connection gone.
void send_and_reset(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    (void)!::write(fd, bytes.data(), bytes.size());
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
}

}  // namespace

FaultResult kill9_and_restart(testing::ServerProcess& server, std::mt19937& rng) {
  server.kill9();
  pause_ms(rng() % 200);
  server.start();
  return {wall_us(), true, std::nullopt};
}

FaultResult stop_and_continue(testing::ServerProcess& server, std::int64_t stopped_ms) {
  ::kill(server.pid(), SIGSTOP);
  pause_ms(stopped_ms);
  ::kill(server.pid(), SIGCONT);
  return {wall_us(), true, std::nullopt};
}

FaultResult vanish_clients(int port, const std::string& key, std::int64_t ttl_ms,
                           History& history) {
  const std::string ttl = std::to_string(ttl_ms);
  const std::string acquire =
      testing::RespClient::encode({"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", "60000"});
  send_and_reset(port, acquire.substr(0, acquire.size() / 2));
  send_and_reset(port, acquire);
  FaultResult result;
  try {
    testing::RespClient holder = testing::RespClient::tcp(port);
    const testing::RespValue grant =
        holder.call({"LOCK.ACQUIRE", key, "TTL", ttl, "TIMEOUT", std::to_string(4 * ttl_ms)},
                    static_cast<int>(5 * ttl_ms) + 30'000);
    if (!grant.is_error()) {
      Hold hold{key,
                grant.number("token"),
                grant.number("acquiredAt"),
                grant.number("leaseExpiresAt"),
                wall_us(),
                0};
      hold.end_us = hold.lease_end_ms * 1000;  // never released
      history.granted(key, hold.start_us);
      history.add(hold);
      result.abandoned = hold;
    }
  } catch (const std::exception&) {
    // The server went away meanwhile: nothing was held.
  }
  result.end_us = wall_us();
  return result;
}

FaultResult restart_database(testing::TestPostgres& postgres) {
  postgres.stop();
  pause_ms(200);
  postgres.start_again();
  return {wall_us(), true, std::nullopt};
}

}  // namespace holdfast::torture
