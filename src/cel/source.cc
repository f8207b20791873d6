/* Offset -> line:column translation; see source.h. */
#include "cel/source.h"

#include <algorithm>

#include "cel/utf8.h"

namespace holdfast::cel {

SourceMap::SourceMap(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (std::uint32_t i = 0; i < text_.size(); ++i) {
    // CEL's NEWLINE is \r\n, \r or \n; a \r\n pair starts one line, not two.
    if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n'))) {
      line_starts_.push_back(i + 1);
    }
  }
}

SourcePosition SourceMap::position(std::uint32_t offset) const {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text_.size()));
  const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const auto line_index = static_cast<std::uint32_t>(it - line_starts_.begin() - 1);
  const std::uint32_t start = line_starts_[line_index];
  const auto column = count_code_points(std::string_view(text_).substr(start, offset - start));
  return SourcePosition{line_index + 1, static_cast<std::uint32_t>(column + 1)};
}

Error SourceMap::error_at(std::uint32_t offset, std::string_view message) const {
  const SourcePosition pos = position(offset);
  std::string text = std::to_string(pos.line);
  text += ':';
  text += std::to_string(pos.column);
  text += ": ";
  text += message;
  Error error = invalid_argument(std::move(text));
  error.with("offset", static_cast<std::int64_t>(offset))
      .with("line", static_cast<std::int64_t>(pos.line))
      .with("column", static_cast<std::int64_t>(pos.column));
  return error;
}

}  // namespace holdfast::cel
