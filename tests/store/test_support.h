// Helpers shared by the store tests: sample holds and changes, comparison of changes, a fake
// data dir, and waiting for the syncer thread.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/clock.h"
#include "core/hold.h"
#include "store/wal/coding.h"
#include "store/wal/crc32c.h"
#include "store/wal/fake_file_system.h"
#include "store/wal/format.h"
#include "store/wal/log_reader.h"
#include "store/wal/record.h"
#include "store/wal/wal_store.h"

namespace holdfast::wal::testing {

inline constexpr Millis kStart = 1'700'000'000'000;
inline const std::string kDir = "/data";

// Torn writes: where the 512-byte sector after the one holding `offset` starts, and a range
// of a file's bytes that never reached the disk (reads as zeros).
inline std::uint64_t next_sector(std::uint64_t offset) {
  return (offset / kTornWriteSector + 1) * kTornWriteSector;
}
inline void zero_range(std::string& bytes, std::uint64_t from, std::uint64_t to) {
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from),
            bytes.begin() + static_cast<std::ptrdiff_t>(to), '\0');
}

inline HoldState make_hold(std::string key, std::uint64_t token, Millis expires = kStart + 60'000,
                           Scope scope = Scope::kLease) {
  HoldState h;
  h.key = std::move(key);
  for (std::size_t i = 0; i < h.handle.bytes.size(); ++i)
    h.handle.bytes[i] = static_cast<std::uint8_t>(token * 31 + i);
  h.token = token;
  h.held_by = "user:alice";
  h.owner = "worker-7";
  h.acquired_at = kStart;
  h.lease_expires_at = expires;
  h.scope = scope;
  h.kind = HoldKind::kHandle;
  return h;
}

// The record of a grant of key "k/<token>" with that token.
inline Change grant(std::uint64_t token) {
  return Granted{make_hold("k/" + std::to_string(token), token)};
}

// One change through the log's encoding and back: what replay would read.
inline Result<Change> round_trip(const Change& change) {
  std::string bytes;
  append_record(bytes, change);
  std::string_view rest = bytes;
  Result<RecordView> view = next_record(rest);
  if (!view) return std::move(view).error();
  return decode_record(view->type, view->payload);
}

inline HoldState make_assigned(std::string key, std::uint64_t token) {
  HoldState h;
  h.key = std::move(key);
  h.token = token;
  h.held_by = "function:scheduler";
  h.holder_id = "node-3";
  h.acquired_at = kStart;
  h.lease_expires_at = kNever;
  h.kind = HoldKind::kAssigned;
  return h;
}

// One change of every kind, with non-trivial field values.
inline std::vector<Change> every_kind_of_change() {
  return {
      Granted{make_hold("orders/42", 7)},
      Granted{make_assigned("shard/9", 8)},
      Granted{make_hold("session/key", 9, kStart + 5, Scope::kSession)},
      Renewed{"orders/42", 7, kStart + 120'000},
      Released{"orders/42", 7},
      RuleSetPut{"locks", "[[rule]]\nkey = \"orders/*\"\nallow = \"true\"\n"},
      RuleSetDeleted{"locks"},
  };
}

inline bool same_change(const Change& a, const Change& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Granted>)
          return x.hold == y.hold;
        else if constexpr (std::is_same_v<T, GroupGranted>)
          return x.holds == y.holds;
        else if constexpr (std::is_same_v<T, Renewed>)
          return x.key == y.key && x.token == y.token && x.lease_expires_at == y.lease_expires_at;
        else if constexpr (std::is_same_v<T, Released>)
          return x.key == y.key && x.token == y.token;
        else if constexpr (std::is_same_v<T, RuleSetPut>)
          return x.name == y.name && x.toml == y.toml;
        else if constexpr (std::is_same_v<T, LeaseHorizon>)
          return x.until == y.until && x.tokens_through == y.tokens_through &&
                 x.written_at == y.written_at && x.clean == y.clean && x.max_lease == y.max_lease;
        else if constexpr (std::is_same_v<T, ValueEdit>)
          return x == y;
        else
          return x.name == y.name;
      },
      a);
}

// Waits until the predicate holds; false if it never does (60 s: only a hang gets there, also on
// a machine busy with other builds).
template <class Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

inline bool wait_durable(Store& store, std::uint64_t sequence) {
  store.submit();
  return eventually([&] { return store.durable_sequence() >= sequence; });
}

inline WalOptions fake_options() {
  WalOptions o;
  o.data_dir = kDir;
  // Exact file sizes in the tests; the preallocation tests turn it on with small segments.
  o.preallocate_segments = false;
  o.on_fault = [](const std::optional<Error>& e) {
    if (e) ADD_FAILURE() << "unexpected store fault: " << e->message;
  };
  return o;
}

inline std::string segment_path(std::uint64_t n) {
  char name[64];
  std::snprintf(name, sizeof name, "/data/wal-%020llu.log", static_cast<unsigned long long>(n));
  return name;
}

inline std::string snapshot_path(std::uint64_t n) {
  char name[64];
  std::snprintf(name, sizeof name, "/data/snap-%020llu.snap", static_cast<unsigned long long>(n));
  return name;
}

// Holds sorted by key, for comparing states regardless of order.
inline std::vector<HoldState> sorted_holds(std::vector<HoldState> holds) {
  std::sort(holds.begin(), holds.end(),
            [](const HoldState& a, const HoldState& b) { return a.key < b.key; });
  return holds;
}

}  // namespace holdfast::wal::testing

namespace holdfast::wal::testing {

// A reference lock table in a few lines: what the real table would hold after the changes.
// Serves as the state source of snapshot tests and as the expected outcome of a restart.
class Model {
 public:
  void apply(const Change& change) {
    if (const auto* g = std::get_if<Granted>(&change)) {
      holds_[g->hold.key] = g->hold;
      last_token_ = std::max(last_token_, g->hold.token);
    } else if (const auto* r = std::get_if<Renewed>(&change)) {
      auto it = holds_.find(r->key);
      if (it != holds_.end() && it->second.token == r->token)
        it->second.lease_expires_at = r->lease_expires_at;
    } else if (const auto* x = std::get_if<Released>(&change)) {
      auto it = holds_.find(x->key);
      if (it != holds_.end() && it->second.token == x->token) holds_.erase(it);
    } else if (const auto* p = std::get_if<RuleSetPut>(&change)) {
      rule_set_ = *p;
    } else if (const auto* d = std::get_if<RuleSetDeleted>(&change)) {
      if (rule_set_ && rule_set_->name == d->name) rule_set_.reset();
    }
  }

  // Everything the table holds (session holds too), as a state source returns it.
  DurableState live() const {
    DurableState s;
    s.last_token = last_token_;
    for (const auto& [key, hold] : holds_) s.holds.push_back(hold);
    s.rule_set = rule_set_;
    return s;
  }

  // What a restart at `now` must bring back.
  DurableState after_restart(Millis now) const {
    DurableState s = live();
    std::erase_if(s.holds, [now](const HoldState& h) {
      return h.scope == Scope::kSession || h.lease_expires_at <= now;
    });
    return s;
  }

 private:
  std::map<std::string, HoldState> holds_;
  std::uint64_t last_token_ = 0;
  std::optional<RuleSetPut> rule_set_;
};

inline void expect_same_state(const DurableState& actual, const DurableState& expected) {
  EXPECT_EQ(actual.last_token, expected.last_token);
  EXPECT_EQ(sorted_holds(actual.holds), sorted_holds(expected.holds));
  ASSERT_EQ(actual.rule_set.has_value(), expected.rule_set.has_value());
  if (actual.rule_set) {
    EXPECT_EQ(actual.rule_set->name, expected.rule_set->name);
    EXPECT_EQ(actual.rule_set->toml, expected.rule_set->toml);
  }
}

// A snapshot file of the current version, without typed values, rewritten as an older version
// (`magic`): versions 1 to 4 have no value_count after hold_count; the rest of their body is
// the same. The checksum and length are made anew.
inline std::string older_snapshot(const std::string& current, std::string_view magic) {
  std::string body = current.substr(kSnapshotHeaderSize,
                                    current.size() - kSnapshotHeaderSize - kSnapshotTrailerSize);
  EXPECT_EQ(load_u64(body.data() + 24), 0u) << "the snapshot holds typed values";
  body.erase(24, 8);  // next_segment last_token hold_count | value_count
  std::string out(magic);
  out += body;
  put_u32(out, crc32c::mask(crc32c::value(body)));
  put_u64(out, body.size());
  return out;
}

// Reads back a segment of an older format (its magic `magic`) holding one frame of `records`.
inline std::vector<Change> read_segment_of(std::string_view magic, const std::string& records) {
  const FrameHeader header = encode_frame_header(records, 1);
  std::string bytes(magic);
  bytes.append(header.data(), header.size());
  bytes += records;
  std::vector<Change> changes;
  Result<SegmentScan> scan = read_segment(bytes, "/data/wal-2.log", SegmentPosition::kNewest,
                                          [&](Change&& c) { changes.push_back(std::move(c)); });
  EXPECT_TRUE(scan.ok()) << scan.error().message;
  return changes;
}

}  // namespace holdfast::wal::testing
