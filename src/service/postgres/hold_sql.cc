#include "service/postgres/hold_sql.h"

namespace holdfast::pg::sql {

std::string live(const std::string& h, const std::string& at) {
  return "(" + h + ".lease_expires_at IS NULL OR " + h + ".lease_expires_at > " + at + ")";
}

std::string may_take(const std::string& h, const std::string& at, const std::string& owner,
                     const std::string& held_by, bool retake) {
  std::string out = h + ".lease_expires_at + " + h + ".lock_delay_ms <= " + at;
  if (retake) {
    out += "\n     OR (" + owner + " IS NOT NULL AND " + h + ".kind = 0 AND " + h +
           ".owner = " + owner + "\n         AND " + h + ".held_by = " + held_by + " AND " + h +
           ".lease_expires_at > " + at + ")";
  }
  return out;
}

std::string grant_upsert(const std::string& select, bool retake) {
  return R"sql(  INSERT INTO holdfast_holds AS h (key, handle, token, held_by, owner, holder_id, acquired_at,
                                   lease_expires_at, scope, kind, node_id, session_id,
                                   lock_delay_ms)
  )sql" + select +
         R"sql(
  ON CONFLICT (key) DO UPDATE SET
    handle = EXCLUDED.handle, token = nextval('holdfast_tokens'), held_by = EXCLUDED.held_by,
    owner = EXCLUDED.owner, holder_id = NULL, acquired_at = EXCLUDED.acquired_at,
    lease_expires_at = EXCLUDED.lease_expires_at, scope = EXCLUDED.scope, kind = 0,
    node_id = EXCLUDED.node_id, session_id = EXCLUDED.session_id,
    lock_delay_ms = EXCLUDED.lock_delay_ms, mode = 0, permit_limit = NULL
  WHERE )sql" +
         may_take("h", "EXCLUDED.acquired_at", "EXCLUDED.owner", "EXCLUDED.held_by", retake) +
         "\n  RETURNING " + kHoldCols;
}

std::string in_key_order(const std::string& where) {
  return "locked AS MATERIALIZED (SELECT h.key FROM holdfast_holds h, now WHERE " + where +
         " ORDER BY h.key FOR UPDATE OF h)";
}

std::string free_rows(const std::string& where, bool vanished) {
  return in_key_order(where) + R"sql(,
freed AS (UPDATE holdfast_holds h
             SET lease_expires_at = LEAST(coalesce(h.lease_expires_at, now.ms), now.ms),
                 scope = 0, node_id = NULL, session_id = NULL)sql" +
         std::string(vanished ? "" : ", lock_delay_ms = 0") + R"sql(
            FROM now WHERE h.key IN (SELECT l.key FROM locked l) AND )sql" +
         where + " RETURNING h.key)";
}

}  // namespace holdfast::pg::sql
