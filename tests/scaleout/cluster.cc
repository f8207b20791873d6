#include "cluster.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "support/eventually.h"

namespace holdfast::testing {
namespace {

std::unique_ptr<TestPostgres>& server() {
  static std::unique_ptr<TestPostgres> pg;
  return pg;
}

class PostgresEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { server() = std::make_unique<TestPostgres>(); }
  void TearDown() override { server().reset(); }
};

[[maybe_unused]] const auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

}  // namespace

const std::string& postgres_url() { return server()->url(); }

bool await_registered_wait(const std::string& store_url, const std::string& key) {
  SqlSession sql(store_url);
  const auto deadline = std::chrono::steady_clock::now() + kEventually;
  while (std::chrono::steady_clock::now() < deadline) {
    if (sql.value("SELECT count(*) FROM holdfast_waits WHERE key = '" + key + "'") != "0")
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

Cluster::Cluster(int nodes, std::vector<std::string> extra)
    : store_url_(fresh_store_url(postgres_url())), extra_(std::move(extra)) {
  for (int i = 0; i < nodes; ++i) nodes_.push_back(std::make_unique<ServerProcess>(node_flags()));
}

std::int64_t Cluster::last_heartbeat(int i) {
  std::string id;
  std::ifstream(node(i).data_dir() + "/node-id") >> id;
  return std::stoll(
      sql_value(store_url_, "SELECT heartbeat_at FROM holdfast_nodes WHERE id = " + id));
}

std::vector<std::string> Cluster::node_flags() const {
  std::vector<std::string> flags = {"--store", store_url_, "--session-grace-ms",
                                    std::to_string(kSessionGraceMs)};
  flags.insert(flags.end(), extra_.begin(), extra_.end());
  return flags;
}

}  // namespace holdfast::testing
