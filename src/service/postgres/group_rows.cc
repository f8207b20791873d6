// HoldRows' multi-key statements (hold_rows.h): the group grant, and release and renew by
// handle, each one call of a plpgsql function of schema.cc (migration 5).
#include "service/postgres/hold_rows.h"

namespace holdfast::pg {
namespace {

// A PostgreSQL array literal of texts: every element quoted, its quotes and backslashes escaped.
std::string text_array(const std::vector<KeyRequest>& keys) {
  std::string out = "{";
  for (const KeyRequest& k : keys) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : k.key) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

template <typename F>
std::string number_array(const std::vector<KeyRequest>& keys, F value) {
  std::string out = "{";
  for (const KeyRequest& k : keys) {
    if (out.size() > 1) out += ',';
    out += std::to_string(value(k));
  }
  return out + "}";
}

}  // namespace

Result<GroupGrant> HoldRows::grant_group(const GroupRequest& r) {
  const GrantRequest& q = r.grant;
  Params p;
  p.text(text_array(r.keys))
      .text(number_array(r.keys, [](const KeyRequest& k) { return mode_number(k.mode); }))
      .text(number_array(r.keys,
                         [](const KeyRequest& k) -> std::int64_t {
                           return k.mode == LockMode::kSemaphore ? k.permits : 0;
                         }))
      .text(number_array(r.keys, [](const KeyRequest& k) -> std::int64_t {
        return k.mode == LockMode::kSemaphore ? k.take : 1;
      }));
  p.text(q.handle.to_string()).text(q.held_by).maybe_text(q.owner).number(q.ttl_ms);
  p.number(q.scope == Scope::kSession ? 1 : 0).number(q.node_id);
  if (q.scope == Scope::kSession) {
    p.number(static_cast<std::int64_t>(q.session));
  } else {
    p.null();
  }
  // The handle on any key of the group releases the whole group.
  auto rows = run("hf_grant_group", p, Doubt::on_handle(r.keys.front().key, q.handle.to_string()));
  if (!rows.ok()) return std::move(rows).error();
  // outcome, key, token, acquired_at, lease end, db_now, retry_at, kind_limit
  GroupGrant g;
  if (rows->empty()) return g;
  const std::int64_t outcome = rows->number(0, 0);
  g.db_now = rows->number(0, 5);
  if (outcome != 1) {
    g.key = std::string(rows->text(0, 1));
    if (outcome == 2) {
      g.other_kind = static_cast<std::uint32_t>(rows->number(0, 7));
    } else {
      g.holder_lease_end = rows->maybe_number(0, 6);
    }
    return g;
  }
  g.granted = true;
  for (int i = 0; i < rows->size(); ++i) {
    const KeyRequest& k = r.keys[static_cast<std::size_t>(i)];
    HoldState h;
    h.key = std::string(rows->text(i, 1));
    h.handle = q.handle;
    h.token = static_cast<std::uint64_t>(rows->number(i, 2));
    h.held_by = std::string(q.held_by);
    h.owner = std::string(q.owner.value_or(""));
    h.acquired_at = rows->number(i, 3);
    h.lease_expires_at = rows->number(i, 4);
    h.scope = q.scope;
    h.kind = HoldKind::kHandle;
    h.mode = k.mode;
    h.take = k.mode == LockMode::kSemaphore ? k.take : 0;
    h.permits = k.mode == LockMode::kSemaphore ? k.permits : 0;
    g.holds.push_back(std::move(h));
  }
  return g;
}

Result<std::vector<std::string>> HoldRows::release_handle(std::string_view key,
                                                          std::string_view handle,
                                                          const std::function<void()>& hand_over,
                                                          bool* handed_over) {
  bool in_batch = false;
  auto rows = run_batched(key, "hf_release_handle", Params().text(key).text(handle),
                          Doubt::on_handle(key, handle), hand_over, &in_batch);
  if (handed_over != nullptr) *handed_over = in_batch && hand_over;
  if (!rows.ok()) return std::move(rows).error();
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(rows->size()));
  for (int r = 0; r < rows->size(); ++r) keys.emplace_back(rows->text(r, 0));
  return keys;
}

void HoldRows::release_handle_async(std::string_view key, std::string_view handle,
                                    std::function<void(Result<std::vector<std::string>>)> done) {
  static const std::string kStatement = "hf_release_handle";
  run_batched_async(key, kStatement, Params().text(key).text(handle), Doubt::on_handle(key, handle),
                    [done = std::move(done)](Result<Rows> rows) {
                      if (!rows.ok()) return done(std::move(rows).error());
                      std::vector<std::string> keys;
                      keys.reserve(static_cast<std::size_t>(rows->size()));
                      for (int r = 0; r < rows->size(); ++r) keys.emplace_back(rows->text(r, 0));
                      done(std::move(keys));
                    });
}

Result<std::optional<Millis>> HoldRows::renew_handle(std::string_view key, std::string_view handle,
                                                     Millis ttl_ms) {
  auto rows =
      run_batched(key, "hf_renew_handle", Params().text(key).text(handle).number(ttl_ms), Doubt{});
  if (!rows.ok()) return std::move(rows).error();
  return rows->maybe_number(0, 0);
}

Result<std::vector<HoldRows::GroupOnKey>> HoldRows::groups_on(std::string_view key) {
  auto rows = run("hf_groups_on", Params().text(key));
  if (!rows.ok()) return std::move(rows).error();
  std::vector<GroupOnKey> out;
  for (int r = 0; r < rows->size(); ++r)
    out.push_back(GroupOnKey{std::string(rows->text(r, 0)), std::string(rows->text(r, 1))});
  return out;
}

}  // namespace holdfast::pg
