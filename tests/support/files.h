// A whole file as a string, for the tests that read what a program wrote.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace holdfast::testing {

// The file's bytes; empty when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace holdfast::testing
