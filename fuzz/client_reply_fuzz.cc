// Fuzzes the client's reply framing against its parser. The input's first byte sets how many
// bytes arrive at a time; the rest is the server's stream. One ReplyFramer sees the stream grow
// as the connection would, and at every step it must agree with parse_reply() on the same
// bytes: a length only where the parser finds a whole reply of exactly that length (or throws),
// and 0 or an exception only where the parser finds no reply.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "client/resp_codec.h"
#include "holdfast/errors.h"

namespace {

using holdfast::ProtocolError;
using holdfast::client_internal::parse_reply;
using holdfast::client_internal::ParseOutcome;
using holdfast::client_internal::ReplyFramer;

enum class Parsed { kWhole, kIncomplete, kMalformed };

Parsed parse(std::string_view bytes, std::size_t* consumed) {
  try {
    std::optional<ParseOutcome> out = parse_reply(bytes);
    if (!out) return Parsed::kIncomplete;
    *consumed = out->consumed;
    return Parsed::kWhole;
  } catch (const ProtocolError&) {
    return Parsed::kMalformed;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t step = 1 + data[0] % 32;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  ReplyFramer framer;
  std::size_t start = 0;  // where the reply being framed begins
  std::size_t seen = start;
  while (seen < stream.size()) {
    seen = std::min(seen + step, stream.size());
    const std::string_view buffer = stream.substr(start, seen - start);
    std::size_t length = 0;
    bool threw = false;
    try {
      length = framer.complete_length(buffer);
    } catch (const ProtocolError&) {
      threw = true;
    }
    std::size_t consumed = 0;
    const Parsed parsed = parse(buffer, &consumed);
    if (threw || length == 0) {
      if (parsed == Parsed::kWhole) std::abort();  // the framer missed a whole reply
      if (threw) return 0;                         // the connection is broken from here on
      continue;
    }
    if (parsed == Parsed::kIncomplete) std::abort();  // framed a reply the parser wants more of
    if (parsed == Parsed::kWhole && consumed != length) std::abort();
    if (parsed == Parsed::kMalformed) return 0;
    start += length;
    seen = start;
    framer.reset();
  }
  return 0;
}
