#include "core/glob.h"

#include <cstddef>

namespace holdfast {
namespace {

// Matches one bracket class starting after '['; sets `end` to the index after ']'.
bool match_class(std::string_view p, std::size_t start, char c, std::size_t* end) {
  std::size_t i = start;
  bool negate = false;
  if (i < p.size() && p[i] == '^') {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    char lo = p[i];
    if (lo == '\\' && i + 1 < p.size()) lo = p[++i];
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      char hi = p[i + 2];
      if (hi == '\\' && i + 3 < p.size()) {
        hi = p[i + 3];
        ++i;
      }
      if (lo > hi) std::swap(lo, hi);
      if (c >= lo && c <= hi) matched = true;
      i += 3;
    } else {
      if (c == lo) matched = true;
      ++i;
    }
  }
  *end = i < p.size() ? i + 1 : i;  // an unclosed class runs to the end of the pattern
  return matched != negate;
}

}  // namespace

// Iterative matcher with single-star backtracking: on a mismatch, resume after the most recent
// '*' with one more character consumed. This is linear in practice and never recursive.
bool glob_match(std::string_view p, std::string_view t) {
  std::size_t pi = 0, ti = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    if (pi < p.size()) {
      char pc = p[pi];
      if (pc == '*') {
        star_p = ++pi;
        star_t = ti;
        continue;
      }
      if (pc == '?') {
        ++pi;
        ++ti;
        continue;
      }
      if (pc == '[') {
        std::size_t end = 0;
        if (match_class(p, pi + 1, t[ti], &end)) {
          pi = end;
          ++ti;
          continue;
        }
      } else {
        if (pc == '\\' && pi + 1 < p.size()) pc = p[++pi];
        if (pc == t[ti]) {
          ++pi;
          ++ti;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    ti = ++star_t;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::string glob_literal_prefix(std::string_view glob) {
  const auto special = glob.find_first_of("*?[\\");
  return std::string(glob.substr(0, special));
}

}  // namespace holdfast
