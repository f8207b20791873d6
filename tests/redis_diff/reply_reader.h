// A RESP connection for comparing servers reply by reply: it keeps every distinction the wire
// makes (a nil bulk and a nil array, a status and a bulk, a RESP3 double and a bulk string) and
// writes each reply in one canonical line, where a map's pairs are in sorted order (Redis's
// hash order is not part of its answer).
#pragma once

#include <string>
#include <vector>

namespace holdfast::testing {

class ReplyReader {
 public:
  explicit ReplyReader(int port);
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  // Sends one command and answers its reply, canonical. `pairs`: the reply is a flat array of
  // field, value pairs (HGETALL in RESP2), sorted as a map's. Throws on a broken connection.
  std::string call(const std::vector<std::string>& args, bool pairs = false);

 private:
  std::string read_reply(bool pairs);
  char next();
  std::string line();
  std::string bytes(std::size_t n);

  int fd_ = -1;
  std::string buf_;
  std::size_t pos_ = 0;
};

}  // namespace holdfast::testing
