// Snapshot writing streams holds into a 1 MiB buffer, extending the body CRC and flushing it
// to the file whenever it fills; the trailer (CRC and length) goes last, which is why the
// length sits at the end rather than in the header. Reading takes the whole file at once
// (one read) and decodes it in a flat loop into a reserved vector.
#include "store/wal/snapshot.h"

#include "store/wal/coding.h"
#include "store/wal/crc32c.h"
#include "store/wal/data_dir.h"
#include "store/wal/format.h"
#include "store/wal/record.h"

namespace holdfast::wal {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

class BodyWriter {
 public:
  explicit BodyWriter(WritableFile& file) : file_(file) { buffer_.reserve(2 * kFlushBytes); }

  std::string& buffer() { return buffer_; }

  Status maybe_flush() { return buffer_.size() >= kFlushBytes ? flush() : ok_status(); }

  Status flush() {
    if (buffer_.empty()) return ok_status();
    crc_ = crc32c::extend(crc_, buffer_);
    length_ += buffer_.size();
    const std::string_view pieces[] = {buffer_};
    Status s = file_.append(pieces);
    buffer_.clear();
    return s;
  }

  std::uint32_t crc() const { return crc_; }
  std::uint64_t length() const { return length_; }

 private:
  WritableFile& file_;
  std::string buffer_;
  std::uint32_t crc_ = 0;
  std::uint64_t length_ = 0;
};

Status write_contents(WritableFile& file, std::uint64_t next_segment, const DurableState& state) {
  const std::string_view magic[] = {kSnapshotMagic};
  if (Status s = file.append(magic); !s) return s;

  BodyWriter body(file);
  std::uint64_t hold_count = 0;
  std::uint64_t last_token = state.last_token;
  for (const HoldState& hold : state.holds) {
    last_token = std::max(last_token, hold.token);
    if (hold.scope == Scope::kLease) ++hold_count;
  }
  put_u64(body.buffer(), next_segment);
  put_u64(body.buffer(), last_token);
  put_u64(body.buffer(), hold_count);
  for (const HoldState& hold : state.holds) {
    if (hold.scope != Scope::kLease) continue;
    append_hold(body.buffer(), hold);
    if (Status s = body.maybe_flush(); !s) return s;
  }
  put_u8(body.buffer(), state.rule_set ? 1 : 0);
  if (state.rule_set) {
    put_str(body.buffer(), state.rule_set->name);
    put_str(body.buffer(), state.rule_set->toml);
  }
  if (Status s = body.flush(); !s) return s;

  std::string trailer;
  put_u32(trailer, crc32c::mask(body.crc()));
  put_u64(trailer, body.length());
  const std::string_view pieces[] = {trailer};
  return file.append(pieces);
}

Error snapshot_error(const std::string& path, std::string_view what) {
  return Error(ErrorCode::kInternal, "bad snapshot " + path + ": " + std::string(what))
      .with("file", path);
}

}  // namespace

Status write_snapshot(FileSystem& fs, const std::string& dir, std::uint64_t next_segment,
                      const DurableState& state) {
  const std::string path = join_path(dir, snapshot_file_name(next_segment));
  const std::string temp = path + std::string(kTempSuffix);
  Result<std::unique_ptr<WritableFile>> file = fs.create_file(temp);
  if (!file) return std::move(file).error();
  Status written = write_contents(**file, next_segment, state);
  if (written) written = (*file)->sync();
  Status closed = (*file)->close();
  if (written && !closed) written = std::move(closed);
  if (!written) {
    (void)fs.remove_file(temp);
    return written;
  }
  if (Status s = fs.rename_file(temp, path); !s) return s;
  return fs.sync_dir(dir);
}

Result<Snapshot> decode_snapshot(std::string_view data, const std::string& path,
                                 std::uint64_t expected_next_segment) {
  if (data.size() < kSnapshotHeaderSize + kSnapshotTrailerSize)
    return snapshot_error(path, "file is too short");
  if (data.substr(0, kSnapshotHeaderSize) != kSnapshotMagic)
    return snapshot_error(path, "not a holdfast snapshot (bad magic)");
  const char* trailer = data.data() + data.size() - kSnapshotTrailerSize;
  const std::uint32_t body_crc = load_u32(trailer);
  const std::uint64_t body_length = load_u64(trailer + 4);
  if (body_length != data.size() - kSnapshotHeaderSize - kSnapshotTrailerSize)
    return snapshot_error(path, "length in trailer does not match the file size (incomplete?)");
  const std::string_view body = data.substr(kSnapshotHeaderSize, body_length);
  if (crc32c::unmask(body_crc) != crc32c::value(body))
    return snapshot_error(path, "checksum mismatch");

  Decoder in(body);
  Snapshot snapshot;
  snapshot.next_segment = in.u64();
  snapshot.state.last_token = in.u64();
  const std::uint64_t hold_count = in.u64();
  // A count the remaining bytes cannot hold is damage, not a reason for a huge reserve().
  if (!in.ok() || hold_count > in.remaining() / kMinHoldSize)
    return snapshot_error(path, "bad header");
  // Headroom for the holds a log tail adds: untouched capacity costs address space, not
  // memory, while growing a vector of a million holds later would move all of them.
  snapshot.state.holds.reserve(hold_count + hold_count / 4 + 1024);
  for (std::uint64_t i = 0; i < hold_count && in.ok(); ++i)
    snapshot.state.holds.push_back(read_hold(in));
  const std::uint8_t has_rule_set = in.u8();
  if (has_rule_set == 1) {
    RuleSetPut rule_set;
    rule_set.name = in.str();
    rule_set.toml = in.str();
    snapshot.state.rule_set = std::move(rule_set);
  } else if (has_rule_set != 0) {
    in.fail();
  }
  if (!in.ok() || !in.done()) return snapshot_error(path, "body does not decode");
  if (snapshot.next_segment != expected_next_segment)
    return snapshot_error(path, "names segment " + std::to_string(snapshot.next_segment) +
                                    " inside but " + std::to_string(expected_next_segment) +
                                    " in its file name");
  return snapshot;
}

}  // namespace holdfast::wal
