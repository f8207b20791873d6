#include "server/resp/options.h"

#include <string>

#include "core/validation.h"

namespace holdfast::resp {
namespace {

bool same_name(std::string_view given, std::string_view upper) {
  if (given.size() != upper.size()) return false;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const char c = given[i];
    if ((c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c) != upper[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<Error> parse_options(std::span<const std::string_view> args,
                                   std::span<const OptionSpec> specs, std::string_view command,
                                   OptionValues& values) {
  for (std::size_t i = 0; i < args.size();) {
    const std::string_view given = args[i++];
    std::size_t k = 0;
    while (k < specs.size() && !same_name(given, specs[k].name)) ++k;
    if (k == specs.size())
      return invalid_argument("unknown option '" + std::string(given.substr(0, 64)) + "' for " +
                              std::string(command));
    const OptionSpec& spec = specs[k];
    OptionValue& v = values[k];
    if (v.present) return invalid_argument(std::string(spec.name) + " given twice");
    v.present = true;
    if (spec.kind == OptionKind::kFlag) continue;
    if (i == args.size()) return invalid_argument(std::string(given) + " needs a value");
    const std::string_view text = args[i++];
    switch (spec.kind) {
      case OptionKind::kText:
        v.text = text;
        break;
      case OptionKind::kMillis: {
        auto n = parse_int64(text);
        if (!n)
          return invalid_argument(std::string(spec.name) +
                                  " must be an integer number of milliseconds");
        v.number = *n;
        break;
      }
      case OptionKind::kCount: {
        auto n = parse_int64(text);
        if (!n || *n < 1)
          return invalid_argument(std::string(spec.name) + " must be a positive integer");
        v.number = *n;
        break;
      }
      case OptionKind::kFlag:
        break;
    }
  }
  for (std::size_t k = 0; k < specs.size(); ++k)
    if (!specs[k].required.empty() && !values[k].present)
      return invalid_argument(std::string(specs[k].required));
  return std::nullopt;
}

}  // namespace holdfast::resp
