// Helpers shared by the targets: see target.h.
#include "target.h"

#include <fstream>
#include <iterator>

namespace holdfast::bench {

std::string log_tail(const std::filesystem::path& log, std::size_t max_bytes) {
  std::ifstream f(log, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() > max_bytes) all.erase(0, all.size() - max_bytes);
  return all;
}

}  // namespace holdfast::bench
