// File names carry fixed-width decimal numbers so that a plain `ls` shows them in log order.
#include "store/wal/data_dir.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "store/wal/format.h"

namespace holdfast::wal {
namespace {

std::string numbered_name(std::string_view prefix, std::uint64_t number, std::string_view suffix) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%0*llu", kFileNumberDigits,
                static_cast<unsigned long long>(number));
  std::string name(prefix);
  name += digits;
  name += suffix;
  return name;
}

}  // namespace

std::string segment_file_name(std::uint64_t number) {
  return numbered_name(kSegmentPrefix, number, kSegmentSuffix);
}

std::string snapshot_file_name(std::uint64_t number) {
  return numbered_name(kSnapshotPrefix, number, kSnapshotSuffix);
}

std::string join_path(std::string_view dir, std::string_view name) {
  std::string path(dir);
  if (!path.empty() && path.back() != '/') path += '/';
  path += name;
  return path;
}

std::optional<std::uint64_t> parse_file_number(std::string_view name, std::string_view prefix,
                                               std::string_view suffix) {
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  if (name.size() <= prefix.size() + suffix.size()) return std::nullopt;
  const std::string_view digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return number;
}

Result<DirListing> list_data_dir(FileSystem& fs, const std::string& dir) {
  Result<std::vector<std::string>> names = fs.list_dir(dir);
  if (!names) return std::move(names).error();
  DirListing listing;
  for (const std::string& name : *names) {
    if (name.starts_with(kSnapshotPrefix) && name.ends_with(kTempSuffix)) {
      listing.temp_files.push_back(name);
    } else if (auto n = parse_file_number(name, kSegmentPrefix, kSegmentSuffix)) {
      listing.segments.push_back(*n);
    } else if (auto s = parse_file_number(name, kSnapshotPrefix, kSnapshotSuffix)) {
      listing.snapshots.push_back(*s);
    }
  }
  std::sort(listing.segments.begin(), listing.segments.end());
  std::sort(listing.snapshots.begin(), listing.snapshots.end());
  return listing;
}

}  // namespace holdfast::wal
