// recover_log. Choosing the snapshot: the newest one that decodes wins; an older one is used
// only if every segment after it is still there (the compaction deletes segments only after
// a newer snapshot is durable, so this is the case after a crash mid-compaction, and only
// real damage makes a complete newest snapshot unreadable). If no snapshot can be used, the
// error names the newest damaged snapshot, the root cause.
#include "store/wal/recovery.h"

#include <optional>

#include "store/wal/data_dir.h"
#include "store/wal/log_reader.h"
#include "store/wal/replay.h"
#include "store/wal/snapshot.h"

namespace holdfast::wal {
namespace {

Error missing_segment(const std::string& dir, std::uint64_t number, std::string_view why) {
  const std::string path = join_path(dir, segment_file_name(number));
  return Error(ErrorCode::kInternal, "write-ahead log segment " + path + " is missing (" +
                                         std::string(why) + "); refusing to start")
      .with("file", path);
}

// The replay plan: which snapshot, and the segments from its next_segment on.
struct Plan {
  std::optional<Snapshot> snapshot;
  std::uint64_t first_segment = 1;
  std::vector<std::uint64_t> segments;
};

// Segments from `first` on must be first, first+1, ... (or none at all).
std::optional<Error> check_consecutive(const std::string& dir,
                                       const std::vector<std::uint64_t>& all, std::uint64_t first) {
  std::uint64_t expected = first;
  for (const std::uint64_t n : all) {
    if (n < first) continue;
    if (n != expected)
      return missing_segment(dir, expected,
                             expected == first ? "the snapshot's log starts there"
                                               : "segments are numbered without gaps");
    ++expected;
  }
  return std::nullopt;
}

Result<Plan> plan_replay(FileSystem& fs, const std::string& dir, const DirListing& listing) {
  std::optional<Error> newest_bad;
  for (auto it = listing.snapshots.rbegin(); it != listing.snapshots.rend(); ++it) {
    const std::string path = join_path(dir, snapshot_file_name(*it));
    Result<FileContents> data = fs.read_file(path);
    Result<Snapshot> snapshot =
        data ? decode_snapshot(data->data(), path, *it) : Result<Snapshot>(std::move(data).error());
    if (!snapshot) {
      if (!newest_bad) newest_bad = std::move(snapshot).error();
      continue;
    }
    if (std::optional<Error> gap = check_consecutive(dir, listing.segments, *it)) {
      return newest_bad ? std::move(*newest_bad) : std::move(*gap);
    }
    Plan plan;
    plan.first_segment = *it;
    plan.snapshot = std::move(snapshot).value();
    return plan;
  }
  if (newest_bad) return std::move(*newest_bad);
  // No snapshot: the log must be complete from segment 1.
  if (std::optional<Error> gap = check_consecutive(dir, listing.segments, 1)) {
    if (!listing.segments.empty() && listing.segments.front() > 1)
      return missing_segment(dir, 1, "there is no snapshot, so the log must start at 1");
    return std::move(*gap);
  }
  return Plan{};
}

Error refuse(Error error) {
  error.message +=
      "; refusing to start rather than drop changes that were acknowledged. To give up "
      "everything from that offset on, cut the file there (truncate -s OFFSET FILE).";
  return error;
}

}  // namespace

Result<RecoveredLog> recover_log(FileSystem& fs, const std::string& dir, Millis now) {
  Result<DirListing> listing = list_data_dir(fs, dir);
  if (!listing) return std::move(listing).error();
  Result<Plan> plan = plan_replay(fs, dir, *listing);
  if (!plan) return std::move(plan).error();

  RecoveredLog out;
  for (const std::string& name : listing->temp_files) out.garbage.push_back(name);
  for (const std::uint64_t n : listing->segments)
    if (n < plan->first_segment) out.garbage.push_back(segment_file_name(n));
  for (const std::uint64_t n : listing->snapshots)
    if (n < plan->first_segment) out.garbage.push_back(snapshot_file_name(n));

  out.next_segment = plan->first_segment;
  if (plan->snapshot) out.snapshot_segment = plan->snapshot->next_segment;
  ReplayState replay(plan->snapshot ? std::move(plan->snapshot->state) : DurableState{});

  std::vector<std::uint64_t> segments;
  for (const std::uint64_t n : listing->segments)
    if (n >= plan->first_segment) segments.push_back(n);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::uint64_t number = segments[i];
    const std::string path = join_path(dir, segment_file_name(number));
    Result<FileContents> data = fs.read_file(path);
    if (!data) return std::move(data).error();
    const bool newest = i + 1 == segments.size();
    Result<SegmentScan> scan = read_segment(
        data->data(), path, newest ? SegmentPosition::kNewest : SegmentPosition::kOlder,
        [&replay](Change&& change) { replay.apply(change); });
    data = FileContents();  // unmapped before a truncation shrinks the file
    if (!scan) return refuse(std::move(scan).error());
    out.records_replayed += scan->records;
    if (scan->torn_tail) {
      if (Status s = fs.truncate_file(path, scan->valid_bytes); !s) return std::move(s).error();
      out.truncated_torn_tail = true;
    }
    if (scan->valid_bytes == 0) {
      out.next_segment = number;  // created, never written: reuse its number
    } else {
      out.live_segments.emplace_back(number, scan->valid_bytes);
      out.next_segment = number + 1;
    }
  }
  out.state = std::move(replay).finish(now);
  return out;
}

}  // namespace holdfast::wal
