// A webhook handler that serializes events per resource.
//
// A payment provider delivers events concurrently and more than once, to any of several
// replicas of this handler. Events for one order must be applied one at a time (each reads the
// order's state, calls out, writes it back), while events for different orders may run in
// parallel. So each event runs inside client.locked("webhook:order:{}", order_id): the key is
// per resource, and the fencing token travels with the write.
//
// The "order store" here is a folder of small files, one per order: "<count> <last token>".
// Its write refuses a token lower than the last one it saw, the check a real store would make
// (a conditional update on the token column), so a handler whose lease ran out cannot write.
// An O_EXCL marker file per order detects any overlap across threads and processes.
//
//   webhook_handler --server URL --store DIR [--orders 3] [--events 24] [--threads 6]
//
// Delivers `events` events round-robin over `orders` orders from `threads` threads, then
// prints "applied N events, overlaps 0". Exits 1 if an overlap or a fenced write happened.
#include <fcntl.h>
#include <unistd.h>

#include <holdfast/client.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

struct Args {
  std::string server = "127.0.0.1:7420";
  std::string store = "/tmp/holdfast-webhook-store";
  int orders = 3, events = 24, threads = 6;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--server") a.server = value;
    if (flag == "--store") a.store = value;
    if (flag == "--orders") a.orders = std::stoi(value);
    if (flag == "--events") a.events = std::stoi(value);
    if (flag == "--threads") a.threads = std::stoi(value);
  }
  return a;
}

std::atomic<int> overlaps{0}, fenced{0};

// Read-modify-write of one order's record: lost updates would show without the lock.
void apply_event(const std::string& store, int order, std::uint64_t fencing_token) {
  const std::string record = store + "/order-" + std::to_string(order);
  const std::string marker = record + ".busy";
  int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) {
    ++overlaps;  // someone else is inside this order's critical section right now
    return;
  }
  ::close(fd);
  long count = 0;
  std::uint64_t last_token = 0;
  std::ifstream(record) >> count >> last_token;
  std::this_thread::sleep_for(3ms);  // the call to the provider's API
  if (fencing_token < last_token) {
    ++fenced;  // a stale holder: the store refuses the write
  } else {
    std::ofstream(record, std::ios::trunc) << count + 1 << " " << fencing_token << "\n";
  }
  ::unlink(marker.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  holdfast::Client client(args.server);
  std::atomic<int> next_event{0}, applied{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < args.threads; ++t) {
    workers.emplace_back([&] {
      for (int e = next_event++; e < args.events; e = next_event++) {
        const int order = e % args.orders;
        client.locked("webhook:order:{}", order)
            .options({.ttl = 10s, .timeout = 30s})
            .run([&](holdfast::LockContext& ctx) { apply_event(args.store, order, ctx.token()); });
        ++applied;
      }
    });
  }
  for (auto& w : workers) w.join();
  std::cout << "applied " << applied << " events, overlaps " << overlaps << ", fenced writes "
            << fenced << ", max requests in flight per key " << client.stats().max_in_flight_per_key
            << std::endl;
  return overlaps == 0 && fenced == 0 ? 0 : 1;
}
