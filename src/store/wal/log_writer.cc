// Framing: one frame per batch unless the batch is larger than kMaxFrameBody, in which case
// it is cut at record boundaries (walking the record headers) into several frames that still
// leave in one write.
#include "store/wal/log_writer.h"

#include <algorithm>

#include "store/wal/coding.h"
#include "store/wal/crc32c.h"

namespace holdfast::wal {

namespace {

void store_le32(char* p, std::uint32_t v) {
  p[0] = static_cast<char>(v);
  p[1] = static_cast<char>(v >> 8);
  p[2] = static_cast<char>(v >> 16);
  p[3] = static_cast<char>(v >> 24);
}

}  // namespace

FrameHeader encode_frame_header(std::string_view body, std::uint32_t record_count) {
  FrameHeader header{};
  store_le32(header.data() + 4, static_cast<std::uint32_t>(body.size()));
  store_le32(header.data() + 8, crc32c::mask(crc32c::value(body)));
  store_le32(header.data() + 12, record_count);
  store_le32(header.data(), crc32c::mask(crc32c::value({header.data() + 4, kFrameHeaderSize - 4})));
  return header;
}

Result<std::unique_ptr<LogWriter>> LogWriter::create(FileSystem& fs, const std::string& dir,
                                                     const std::string& path, bool sync,
                                                     std::uint64_t reserve_chunk) {
  Result<std::unique_ptr<WritableFile>> file = fs.create_file(path);
  if (!file) return std::move(file).error();
  const std::string_view magic[] = {kSegmentMagic};
  if (Status s = (*file)->append(magic); !s) return std::move(s).error();
  std::unique_ptr<LogWriter> writer(
      new LogWriter(std::move(*file), path, kSegmentHeaderSize, reserve_chunk));
  if (Status s = writer->reserve(kSegmentHeaderSize); !s) return std::move(s).error();
  if (sync) {
    if (Status s = writer->file_->sync(); !s) return std::move(s).error();
    if (Status s = fs.sync_dir(dir); !s) return std::move(s).error();
  }
  return writer;
}

Status LogWriter::reserve(std::uint64_t end) {
  const std::uint64_t want = end + reserve_chunk_ / 2;
  if (reserve_chunk_ == 0 || reserved_ >= want) return ok_status();
  const std::uint64_t target = (want + reserve_chunk_ - 1) / reserve_chunk_ * reserve_chunk_;
  if (Status s = file_->preallocate(target); !s) return s;
  reserved_ = target;
  return ok_status();
}

Status LogWriter::add_records(std::string_view records) {
  // First pass: cut into frames and build their headers; second pass: the pieces, which
  // point into headers_ (so it must not grow after that).
  frames_.clear();
  headers_.clear();
  pieces_.clear();
  std::string_view rest = records;
  while (!rest.empty()) {
    std::size_t length = 0;
    std::uint32_t count = 0;
    while (length < rest.size()) {
      if (rest.size() - length < kRecordHeaderSize) {  // not a whole record: a caller bug
        length = rest.size();
        break;
      }
      const std::size_t record =
          kRecordHeaderSize + load_u32(rest.data() + length + 1);  // type:u8 length:u32
      if (count > 0 && length + record > kMaxFrameBody) break;
      length += record;
      ++count;
    }
    length = std::min(length, rest.size());
    frames_.push_back({rest.substr(0, length), count});
    rest.remove_prefix(length);
  }
  for (const Frame& frame : frames_)
    headers_.push_back(encode_frame_header(frame.body, frame.records));
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    pieces_.emplace_back(headers_[i].data(), headers_[i].size());
    pieces_.push_back(frames_[i].body);
  }
  if (pieces_.empty()) return ok_status();
  const std::uint64_t end = size_ + frames_.size() * kFrameHeaderSize + records.size();
  // Zeros first: a frame written past them would append (a size change for the sync), and
  // zeros written after a frame in the same commit cost the same either way.
  if (Status s = reserve(end); !s) return s;
  if (Status s = file_->append(pieces_); !s) return s;
  size_ = end;
  return ok_status();
}

Status LogWriter::sync() { return file_->sync(); }

Status LogWriter::finish(bool sync) {
  if (Status s = file_->truncate_to_appended(); !s) return s;
  reserved_ = size_;
  return sync ? file_->sync() : ok_status();
}

Status LogWriter::close() { return file_->close(); }

}  // namespace holdfast::wal
