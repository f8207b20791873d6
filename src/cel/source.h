/* Source positions for CEL diagnostics.
 *
 * Every token and AST node remembers a byte offset into the expression text. A SourceMap turns
 * that offset into a 1-based line and a 1-based column counted in code points (what an editor
 * shows), and builds the Error every diagnostic uses: the message reads "line:column: what",
 * e.g. "1:14: unexpected token ')'", and the details carry offset, line and column as numbers
 * so callers can point at the spot without parsing the message.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace holdfast::cel {

struct SourcePosition {
  std::uint32_t line = 1;    // 1-based
  std::uint32_t column = 1;  // 1-based, in code points
};

class SourceMap {
 public:
  // Keeps a copy of `text`, so the map outlives the caller's buffer.
  explicit SourceMap(std::string_view text);

  SourcePosition position(std::uint32_t offset) const;

  // An INVALID_ARGUMENT error whose message is prefixed with "line:column: ".
  Error error_at(std::uint32_t offset, std::string_view message) const;

  std::string_view text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::uint32_t> line_starts_;  // offset of the first byte of each line
};

}  // namespace holdfast::cel
