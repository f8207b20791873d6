// Names of the files in the data dir (docs/wal-format.md, section 1) and a typed listing of
// it: which segments and snapshots exist, and which files are leftovers to delete.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "store/wal/file_system.h"

namespace holdfast::wal {

std::string segment_file_name(std::uint64_t number);   // "wal-00000000000000000007.log"
std::string snapshot_file_name(std::uint64_t number);  // "snap-00000000000000000007.snap"
std::string join_path(std::string_view dir, std::string_view name);

// The number in a name of the form prefix + digits + suffix; nullopt for any other name.
std::optional<std::uint64_t> parse_file_number(std::string_view name, std::string_view prefix,
                                               std::string_view suffix);

struct DirListing {
  std::vector<std::uint64_t> segments;   // ascending
  std::vector<std::uint64_t> snapshots;  // ascending
  std::vector<std::string> temp_files;   // "snap-*.tmp": interrupted snapshot writes
};

// Lists dir. Files that are not ours (and LOCK) are left out and left alone.
Result<DirListing> list_data_dir(FileSystem& fs, const std::string& dir);

}  // namespace holdfast::wal
