// The shared mutual-exclusion workload; see contention.h.
#include "contention.h"

#include <time.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "holdfast/sql/advisory_lock.h"
#include "sql_servers.h"

namespace holdfast::sql::testing {
namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t read_file_counter(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::int64_t value = 0;
  in >> value;
  return value;
}

void write_file_counter(const std::filesystem::path& path, std::int64_t value) {
  std::ofstream out(path, std::ios::trunc);
  out << value << '\n';
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }  // test names only

}  // namespace

std::vector<Interval> run_workload(const Workload& w) {
  std::vector<Interval> intervals;
  intervals.reserve(w.iterations);
  const AdvisoryLockOptions options{.timeout = std::chrono::seconds(60),
                                    .transaction = w.transaction};
  const std::string select = "SELECT value FROM counters WHERE name = " + quoted(w.lock_name);
  const auto update = [&](std::int64_t v) {
    return "UPDATE counters SET value = " + std::to_string(v) +
           " WHERE name = " + quoted(w.lock_name);
  };

  std::optional<PgConnection> pg;
  MysqlConnection my;
  if (w.database == Database::kPostgres) {
    pg.emplace(w.postgres_url);
    // The hard case for transaction mode: a REPEATABLE READ snapshot taken before the lock was
    // granted would hide the previous holder's commit and lose increments.
    if (w.transaction) {
      pg_value(pg->get(), "SET default_transaction_isolation = 'repeatable read'");
    }
  } else {
    my = connect_mariadb(w.mariadb_port);
  }
  for (int i = 0; i < w.iterations; ++i) {
    auto section = [&] {
      Interval interval{monotonic_ns(), 0};
      std::int64_t value = 0;
      if (w.counter == CounterKind::kFile) {
        value = read_file_counter(w.counter_file);
      } else {
        value = std::stoll(*(pg ? pg_value(pg->get(), select) : mysql_value(my.get(), select)));
      }
      std::this_thread::yield();  // widen the window a broken lock would lose updates in
      if (w.counter == CounterKind::kFile) {
        write_file_counter(w.counter_file, value + 1);
      } else if (pg) {
        pg_value(pg->get(), update(value + 1));
      } else {
        mysql_value(my.get(), update(value + 1));
      }
      interval.end_ns = monotonic_ns();
      intervals.push_back(interval);
    };
    if (pg) {
      with_advisory_lock(*pg, w.lock_name, section, options);
    } else {
      with_advisory_lock(my.get(), w.lock_name, section, options);
    }
  }
  return intervals;
}

std::optional<std::pair<Interval, Interval>> find_overlap(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  for (std::size_t i = 1; i < intervals.size(); ++i) {
    if (intervals[i].start_ns < intervals[i - 1].end_ns) {
      return std::make_pair(intervals[i - 1], intervals[i]);
    }
  }
  return std::nullopt;
}

void write_intervals(const std::filesystem::path& path, const std::vector<Interval>& intervals) {
  std::ofstream out(path, std::ios::trunc);
  for (const Interval& i : intervals) out << i.start_ns << ' ' << i.end_ns << '\n';
}

std::vector<Interval> read_intervals(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<Interval> intervals;
  Interval i{};
  while (in >> i.start_ns >> i.end_ns) intervals.push_back(i);
  return intervals;
}

void reset_table_counter(const Workload& w) {
  const std::string name = quoted(w.lock_name);
  if (w.database == Database::kPostgres) {
    PgConnection conn(w.postgres_url);
    pg_value(conn.get(),
             "CREATE TABLE IF NOT EXISTS counters (name text PRIMARY KEY, value bigint NOT NULL)");
    pg_value(conn.get(), "DELETE FROM counters WHERE name = " + name);
    pg_value(conn.get(), "INSERT INTO counters VALUES (" + name + ", 0)");
  } else {
    MysqlConnection conn = connect_mariadb(w.mariadb_port);
    mysql_value(conn.get(),
                "CREATE TABLE IF NOT EXISTS counters (name varchar(200) PRIMARY KEY, "
                "value bigint NOT NULL) ENGINE=InnoDB");
    mysql_value(conn.get(), "DELETE FROM counters WHERE name = " + name);
    mysql_value(conn.get(), "INSERT INTO counters VALUES (" + name + ", 0)");
  }
}

std::int64_t read_table_counter(const Workload& w) {
  const std::string select = "SELECT value FROM counters WHERE name = " + quoted(w.lock_name);
  if (w.database == Database::kPostgres) {
    PgConnection conn(w.postgres_url);
    return std::stoll(pg_value(conn.get(), select).value());
  }
  MysqlConnection conn = connect_mariadb(w.mariadb_port);
  return std::stoll(mysql_value(conn.get(), select).value());
}

std::vector<std::string> workload_arguments(const Workload& w,
                                            const std::filesystem::path& intervals_out) {
  return {w.database == Database::kPostgres ? "postgres" : "mariadb",
          w.postgres_url.empty() ? "-" : w.postgres_url,
          std::to_string(w.mariadb_port),
          w.lock_name,
          std::to_string(w.iterations),
          w.transaction ? "transaction" : "session",
          w.counter == CounterKind::kFile ? "file" : "table",
          w.counter_file.empty() ? "-" : w.counter_file.string(),
          intervals_out.string()};
}

Workload parse_workload_arguments(int argc, char** argv, std::filesystem::path* intervals_out) {
  if (argc != 10) {
    throw std::invalid_argument(
        "usage: sql_contender postgres|mariadb PG_URL MARIADB_PORT NAME ITERATIONS "
        "session|transaction file|table COUNTER_FILE INTERVALS_OUT");
  }
  Workload w;
  w.database = std::string(argv[1]) == "postgres" ? Database::kPostgres : Database::kMariaDb;
  w.postgres_url = argv[2];
  w.mariadb_port = std::stoi(argv[3]);
  w.lock_name = argv[4];
  w.iterations = std::stoi(argv[5]);
  w.transaction = std::string(argv[6]) == "transaction";
  w.counter = std::string(argv[7]) == "file" ? CounterKind::kFile : CounterKind::kTable;
  w.counter_file = argv[8];
  *intervals_out = argv[9];
  return w;
}

}  // namespace holdfast::sql::testing
