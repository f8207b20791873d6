// Reading a request's query string, as strictly as its body (json_body.h): every parameter a
// route reads is remembered, and finish() refuses the ones it does not take, naming them.
// Names and values are percent-decoded ('+' is a space).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace holdfast::http {

class QueryReader {
 public:
  explicit QueryReader(std::string_view query);

  // The parameter's value ("" for "?name"), or nullopt; `required` makes absence an error.
  std::optional<std::string> get(std::string_view name, bool required = false);
  // The first error: a required parameter missing, a parameter given twice, or one the route
  // does not take (details.field names it).
  std::optional<Error> finish();

 private:
  struct Param {
    std::string name, value;
    bool read = false;
  };
  std::vector<Param> params_;
  std::optional<Error> error_;
};

}  // namespace holdfast::http
