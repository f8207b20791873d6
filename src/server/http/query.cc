#include "server/http/query.h"

#include "core/text.h"

namespace holdfast::http {

QueryReader::QueryReader(std::string_view query) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      Param p;
      p.name = percent_decode(pair.substr(0, eq));
      if (eq != std::string_view::npos) p.value = percent_decode(pair.substr(eq + 1));
      params_.push_back(std::move(p));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

std::optional<std::string> QueryReader::get(std::string_view name, bool required) {
  std::optional<std::string> found;
  for (Param& p : params_) {
    if (p.name != name) continue;
    if (found && !error_)
      error_ =
          invalid_argument(std::string(name) + " is given twice").with("field", std::string(name));
    p.read = true;
    found = p.value;
  }
  if (!found && required && !error_)
    error_ = invalid_argument(std::string(name) + " is required (?" + std::string(name) + "=...)")
                 .with("field", std::string(name));
  return found;
}

std::optional<Error> QueryReader::finish() {
  if (error_) return error_;
  for (const Param& p : params_)
    if (!p.read) return invalid_argument("unknown query parameter " + p.name).with("field", p.name);
  return std::nullopt;
}

}  // namespace holdfast::http
