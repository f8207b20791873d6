#include "service/postgres/pg_replication.h"

namespace holdfast::pg {

Statement replication_statement() {
  return reading("hf_replication", R"sql(
SELECT current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
       (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')),
       (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL))sql");
}

Result<Replication> read_replication(PgPool& pool) {
  auto rows = pool.run("hf_replication", Params());
  if (!rows.ok()) return std::move(rows).error();
  Replication r;
  r.synchronous_commit = std::string(rows->text(0, 0));
  r.standby_names = std::string(rows->text(0, 1));
  const std::int64_t visible_sync = rows->number(0, 2);
  const std::int64_t hidden = rows->number(0, 3);
  r.sync_standbys = visible_sync == 0 && hidden > 0 ? -1 : visible_sync;
  const bool waits = r.synchronous_commit != "off" && r.synchronous_commit != "local";
  std::string names = r.standby_names;
  while (!names.empty() && names.back() == ' ') names.pop_back();
  if (names.empty()) {
    r.warning =
        "synchronous_standby_names is empty: commits do not wait for a standby, so a failover "
        "can lose answered grants and hand out tokens twice";
  } else if (!waits) {
    r.warning = "synchronous_commit is " + r.synchronous_commit +
                ": commits do not wait for a standby, so a failover can lose answered grants "
                "and hand out tokens twice";
  } else {
    r.synchronous = true;
    if (r.sync_standbys == 0) {
      r.warning = "no synchronous standby is connected: commits wait until one is";
    } else if (r.sync_standbys < 0) {
      r.warning = "the standbys' state is not visible to this role (grant it pg_monitor to see it)";
    }
  }
  return r;
}

}  // namespace holdfast::pg
