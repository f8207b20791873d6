// A long job that keeps its lock by renewing it.
//
// A nightly rebuild takes far longer than any lease you would want to wait out after a crash.
// Instead of a lease of hours, it holds a short one (here 600 ms by default, seconds in real
// life) that with_lock renews in the background at a third of the TTL while the job runs. If the
// process dies, the key frees within one TTL; while it lives, nobody else gets in. Between
// steps the job checks ctx.lost(): if renewal failed for a whole lease, it stops rather than run
// unprotected.
//
//   long_job --server URL [--ttl-ms 600] [--steps 8] [--step-ms 300]
//
// Prints "holding <key> token <t>", one "step i/n" line per step, then "done". Exits 1 if the
// lease was lost.
#include <holdfast/client.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

namespace {

struct Args {
  std::string server = "127.0.0.1:7420";
  int ttl_ms = 600, steps = 8, step_ms = 300;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--server") a.server = value;
    if (flag == "--ttl-ms") a.ttl_ms = std::stoi(value);
    if (flag == "--steps") a.steps = std::stoi(value);
    if (flag == "--step-ms") a.step_ms = std::stoi(value);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  holdfast::Client client(args.server);
  holdfast::WithLockOptions options{.ttl = std::chrono::milliseconds(args.ttl_ms),
                                    .timeout = std::chrono::seconds(10)};
  options.on_lost = [](const holdfast::LockHandle& h) {
    std::cerr << "long_job: lost the lease of " << h.key << " (token " << h.token << ")\n";
  };
  bool completed = client.with_lock("rebuild:nightly", options, [&](holdfast::LockContext& ctx) {
    std::cout << "holding " << ctx.key() << " token " << ctx.token() << std::endl;
    for (int step = 1; step <= args.steps; ++step) {
      // wait_lost doubles as the step's work time: it returns early only if the lease is lost.
      if (ctx.wait_lost(std::chrono::milliseconds(args.step_ms))) return false;
      std::cout << "step " << step << "/" << args.steps << std::endl;
    }
    return true;
  });
  if (!completed) return 1;
  std::cout << "done" << std::endl;
  return 0;
}
