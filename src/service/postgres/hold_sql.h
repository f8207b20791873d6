// SQL text shared by the hold statements (hold_rows.cc) and their set forms (hold_sets.cc), so
// that a grant means one thing whether it runs alone or with other callers' grants.
#pragma once

#include <string>

namespace holdfast::pg::sql {

// Every statement that reads or writes a hold answers rows of this shape:
//   0 granted/found, 1 key, 2 handle, 3 token, 4 held_by, 5 owner, 6 holder_id,
//   7 acquired_at, 8 lease_expires_at, 9 scope, 10 kind, 11 lock_delay_ms, 12 db_now,
//   13 refreshed
// and acquire, assign, find and scan add 14 mode, 15 permit_limit: of the hold found, or when
// nothing was granted of the live row in the way (docs/lock-kinds.md; a row of mode 1 or 2
// stands for the key's holdfast_members, schema.cc). kHoldCols is columns 1 to 11 of row `h`.
inline constexpr char kHoldCols[] =
    "h.key, h.handle, h.token, h.held_by, h.owner, h.holder_id, h.acquired_at, h.lease_expires_at, "
    "h.scope, h.kind, h.lock_delay_ms";
// A row's mode: a group's (heldBy '') or 0. A node of an older schema version, still running during
// an upgrade, grants a key exclusively without resetting `mode`; its hold has a heldBy.
inline constexpr char kRowMode[] = "CASE WHEN h.held_by = '' THEN h.mode ELSE 0 END";

// The hold in row `h` is live at `at`: its lease has not ended (or never ends).
std::string live(const std::string& h, const std::string& at);

// Whether a grant may take the key whose row is `h` at instant `at`: it is free (its lease and then
// its lock-delay ended), or, with `retake`, the same principal (`held_by`) and owner hold it live.
// NULL (not true) when the lease never ends.
std::string may_take(const std::string& h, const std::string& at, const std::string& owner,
                     const std::string& held_by, bool retake);

// The grant of an exclusive handle hold: `select` yields the new row's key, handle, token,
// held_by, owner, holder_id, acquired_at, lease_expires_at, scope, kind, node_id, session_id
// and lock_delay_ms; a key whose row exists is taken only when may_take.
// Answers the granted rows (kHoldCols). Tokens: see hold_rows.h.
std::string grant_upsert(const std::string& select, bool retake);

// A CTE `locked`: the keys of the rows matching `where` (over holds h and now), each row locked,
// in key order. A statement that changes several rows locks them this way first, as a
// multi-key grant (holdfast_grant_group) locks its keys: two such transactions never wait for
// each other's rows in a cycle.
std::string in_key_order(const std::string& where);

// The CTEs `locked` and `freed`: frees the live or session rows matching `where` (over holds h
// and now) and answers their keys. The row stays, with its last token and handle, as a free key
// whose lease ended now: the next grant of the key is then always an update of this row, so its
// token is drawn after it locked the row, i.e. after this hold's token (see hold_rows.h,
// "Tokens"). Keeping the handle (every statement that looks a handle up asks for a live lease)
// changes no indexed column of a lease hold's row, so PostgreSQL rewrites it in place (a HOT
// update: no index entry, less WAL). A release clears the hold's lock-delay; the end of a session
// (`vanished`) keeps it, so the key stays closed that long from now. The rows are locked in key
// order first (in_key_order), as a multi-key grant locks its keys.
std::string free_rows(const std::string& where, bool vanished);

// The CTE `waited` (after free_rows): of the freed keys, those some node waits for, as one
// array `waited.keys`. holdfast_keys_waited() reads holdfast_waits with a fresh snapshot, once
// per statement, after every row of `freed` was updated: the ARRAY reads `freed` to its end
// first (hold_rows.h says why the snapshot matters).
inline constexpr char kWaitedFreed[] =
    "waited AS MATERIALIZED (SELECT holdfast_keys_waited(ARRAY(SELECT f.key FROM freed f)) AS "
    "keys)";

// Of a freed key (`freed.key`, with `waited` in the FROM list): a notification to the nodes
// waiting for it, if any.
inline constexpr char kNotifyFreed[] =
    "CASE WHEN freed.key = ANY (waited.keys) THEN pg_notify('holdfast_keys', freed.key) END";

}  // namespace holdfast::pg::sql
