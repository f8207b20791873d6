// Compaction lists the directory instead of trusting its own bookkeeping, so leftovers of an
// earlier run (a damaged snapshot that recovery skipped, segments a crash kept from being
// deleted) go too. Deleting is the last step: until then a crash leaves a complete older
// snapshot with all of its segments.
#include "store/wal/segment_log.h"

#include "store/wal/data_dir.h"

namespace holdfast::wal {

SegmentLog::SegmentLog(FileSystem& fs, std::string dir, bool sync_new_files,
                       std::uint64_t reserve_chunk)
    : fs_(fs),
      dir_(std::move(dir)),
      sync_new_files_(sync_new_files),
      reserve_chunk_(reserve_chunk) {}

Status SegmentLog::open(std::uint64_t number,
                        const std::vector<std::pair<std::uint64_t, std::uint64_t>>& earlier) {
  for (const auto& [n, bytes] : earlier) finished_[n] = bytes;
  return start(number);
}

Status SegmentLog::start(std::uint64_t number) {
  Result<std::unique_ptr<LogWriter>> writer = LogWriter::create(
      fs_, dir_, join_path(dir_, segment_file_name(number)), sync_new_files_, reserve_chunk_);
  if (!writer) return std::move(writer).error();
  writer_ = std::move(writer).value();
  number_ = number;
  whole_ = writer_->size();
  finished_.erase(number);  // written anew by repair()
  return ok_status();
}

Status SegmentLog::append(std::string_view records) {
  if (Status s = writer_->add_records(records); !s) return s;
  if (!sync_new_files_) whole_ = writer_->size();
  return ok_status();
}

Status SegmentLog::sync() {
  if (Status s = writer_->sync(); !s) return s;
  whole_ = writer_->size();
  return ok_status();
}

Status SegmentLog::repair() {
  if (writer_) {
    (void)writer_->close();  // its errors are the ones being repaired
    writer_.reset();
  }
  if (whole_ <= kSegmentHeaderSize) return start(number_);
  if (Status s = fs_.truncate_file(join_path(dir_, segment_file_name(number_)), whole_); !s)
    return s;
  finished_[number_] = whole_;
  return start(number_ + 1);
}

Status SegmentLog::roll() {
  finished_[number_] = writer_->size();
  if (reserve_chunk_ > 0)
    if (Status s = writer_->finish(sync_new_files_); !s) return s;
  if (Status s = writer_->close(); !s) return s;
  writer_.reset();
  return start(number_ + 1);
}

Status SegmentLog::compact_below(std::uint64_t snapshot) {
  Result<DirListing> listing = list_data_dir(fs_, dir_);
  if (!listing) return std::move(listing).error();
  for (const std::uint64_t n : listing->segments)
    if (n < snapshot)
      if (Status s = fs_.remove_file(join_path(dir_, segment_file_name(n))); !s) return s;
  for (const std::uint64_t n : listing->snapshots)
    if (n < snapshot)
      if (Status s = fs_.remove_file(join_path(dir_, snapshot_file_name(n))); !s) return s;
  finished_.erase(finished_.begin(), finished_.lower_bound(snapshot));
  // Not needed for correctness (recovery ignores what is below the snapshot), but it returns
  // the space for sure.
  return fs_.sync_dir(dir_);
}

Status SegmentLog::close(bool finish) {
  if (!writer_) return ok_status();
  Status s = finish && reserve_chunk_ > 0 ? writer_->finish(sync_new_files_) : ok_status();
  if (Status closed = writer_->close(); s) s = std::move(closed);
  finished_[number_] = writer_->size();
  writer_.reset();
  return s;
}

std::uint64_t SegmentLog::live_bytes() const {
  std::uint64_t total = current_bytes();
  for (const auto& [n, bytes] : finished_) total += bytes;
  return total;
}

}  // namespace holdfast::wal
