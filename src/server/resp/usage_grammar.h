// Usage lines as data: the grammar of the command table's usage lines, and the Redis 7
// argument descriptions (COMMAND DOCS) made from them, so the table stays the one source of
// what each command takes.
//
// Grammar (after the command's own words):
//   line     := item (' ' item)*
//   item     := primary ('|' primary)*            one of the primaries
//   primary  := '[' line ']'                      optional
//             | '<' name '>' ['...']              an argument (repeated with ...)
//             | WORD                              a literal word (upper case, digits, '-')
// A WORD followed by an argument is one argument with that token (TTL <ms>); an optional
// group that starts with a WORD and holds more is a block with that token
// ([AUTH <user> <token>]). Argument types come from their names: key, integer (ms, n, index,
// id, seconds), pattern (glob), else string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::resp {

struct ArgumentDoc {
  std::string name;
  std::string type;   // key, string, integer, pattern, pure-token, oneof, block
  std::string token;  // the literal word before the value; empty: none
  bool optional = false;
  bool multiple = false;
  std::vector<ArgumentDoc> arguments;  // oneof and block only
};

// The arguments of `usage` after its first `skip_words` words (the command's name, and the
// subcommand's). nullopt when the line does not follow the grammar.
std::optional<std::vector<ArgumentDoc>> parse_usage(std::string_view usage, std::size_t skip_words);

}  // namespace holdfast::resp
