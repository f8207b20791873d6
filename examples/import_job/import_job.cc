// An import job that must not overlap itself.
//
// Importing a user's portfolio twice at once would double their data, and nothing upstream
// stops two runs from starting (a cron tick and a manual retry, two replicas of a worker). So
// the job takes the key `portfolio-import:<user>` with no waiting: if another run holds it, this
// run has nothing to do and says so. The fencing token goes with every write, so the store
// could refuse a run whose lease ran out while it was paused.
//
//   import_job --server holdfast://127.0.0.1:7420 --user user-123 [--work-ms 2000]
//
// Prints "started ..." when it holds the key, then "imported ..." or "skipped ..."; exits 0 in
// both cases (a skip is the designed outcome, not a failure), 1 on errors.
#include <holdfast/client.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;

struct Args {
  std::string server = "127.0.0.1:7420";
  std::string user = "user-123";
  int work_ms = 2000;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--server")) a.server = argv[i + 1];
    if (!std::strcmp(argv[i], "--user")) a.user = argv[i + 1];
    if (!std::strcmp(argv[i], "--work-ms")) a.work_ms = std::stoi(argv[i + 1]);
  }
  return a;
}

// Stands in for the real import: a few batches, each written with the fencing token.
void import_portfolio(const std::string& user, holdfast::LockContext& ctx, int work_ms) {
  constexpr int kBatches = 10;
  for (int batch = 0; batch < kBatches; ++batch) {
    if (ctx.lost())
      throw std::runtime_error("lease lost during the import of " + user + "; stopping");
    // write_batch(user, batch, /*fencing_token=*/ctx.token());
    std::this_thread::sleep_for(std::chrono::milliseconds(work_ms / kBatches));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  holdfast::Client client(args.server);
  const std::string key = holdfast::format_key("portfolio-import:{}", args.user);
  try {
    // timeout 0: one attempt. The lease covers the whole import and is renewed while it runs.
    client.with_lock(key, {.ttl = 10s, .timeout = 0ms}, [&](holdfast::LockContext& ctx) {
      std::cout << "started import of " << args.user << " with fencing token " << ctx.token()
                << std::endl;
      import_portfolio(args.user, ctx, args.work_ms);
    });
  } catch (const holdfast::LockTimeoutError& e) {
    std::cout << "skipped: an import of " << args.user << " is already running (" << e.key()
              << " is held)" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "import_job: " << e.what() << std::endl;
    return 1;
  }
  std::cout << "imported " << args.user << std::endl;
  return 0;
}
