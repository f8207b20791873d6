// The limits of typed values (docs/reference.md section 8.6): a lock server keeps the small
// structures lock libraries build (a semaphore's holders, a re-entrant lock's counts, a fair
// lock's queue), not a database. Both backends enforce them through the same operations
// (value_ops.h): a command that would pass one changes nothing and answers an error.
#pragma once

#include <cstddef>

namespace holdfast {

// Members of a sorted set, fields of a hash, elements of a list: at most this many per key.
inline constexpr std::size_t kMaxValueElements = 10'000;
// A member, field, hash value or list element: at most this many bytes (any bytes, "" too).
inline constexpr std::size_t kMaxElementBytes = 4096;

}  // namespace holdfast
