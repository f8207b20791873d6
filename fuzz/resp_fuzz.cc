// Fuzzes the RESP request parser: any byte stream must parse into commands, ask for more
// bytes, or report an error; never read out of bounds, loop, or consume nothing on success.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/resp/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  holdfast::resp::ParserLimits limits;
  limits.max_frame_bytes = 4096;
  limits.max_args = 64;
  limits.max_inline_bytes = 1024;
  holdfast::resp::RequestParser parser(limits);
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    std::size_t consumed = 0;
    auto status = parser.parse(rest, &consumed);
    if (status != holdfast::resp::ParseStatus::kComplete) break;
    if (consumed == 0 || consumed > rest.size()) std::abort();
    for (std::string_view arg : parser.args()) {
      // Every argument lies inside the input.
      if (arg.data() < rest.data() || arg.data() + arg.size() > rest.data() + rest.size())
        std::abort();
    }
    rest.remove_prefix(consumed);
  }
  return 0;
}
