// Reading "NAME value" options after a command's positional arguments (TTL 1000 OWNER x ...),
// with the first error sticking, as in Dragonfly's CmdArgParser.
#pragma once

#include <array>
#include <cctype>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/validation.h"

namespace holdfast::resp {

class OptionReader {
 public:
  OptionReader(std::span<const std::string_view> args, std::string_view command)
      : args_(args), command_(command) {}

  // Advances to the next option name; false at the end or after an error.
  bool next() {
    if (error_ || i_ >= args_.size()) return false;
    std::string_view raw = args_[i_++];
    name_len_ = std::min(raw.size(), name_.size());
    for (std::size_t k = 0; k < name_len_; ++k)
      name_[k] = static_cast<char>(std::toupper(static_cast<unsigned char>(raw[k])));
    if (raw.size() > name_.size()) name_len_ = 0;  // too long to be one of ours
    raw_ = raw;
    return true;
  }
  bool is(std::string_view option) const { return std::string_view(name_.data(), name_len_) == option; }

  // The option's value as text; `seen` guards against giving an option twice.
  std::optional<std::string_view> text(bool* seen) {
    if (!take_seen(seen)) return std::nullopt;
    if (i_ >= args_.size()) {
      fail(std::string(raw_) + " needs a value");
      return std::nullopt;
    }
    return args_[i_++];
  }
  // The option's value as a strict 64-bit integer number of milliseconds.
  std::optional<std::int64_t> millis(bool* seen) {
    auto v = text(seen);
    if (!v) return std::nullopt;
    auto n = parse_int64(*v);
    if (!n) fail(upper_name() + " must be an integer number of milliseconds");
    return n;
  }
  bool flag(bool* seen) { return take_seen(seen); }
  void unknown() { fail("unknown option '" + std::string(raw_.substr(0, 64)) + "' for " + std::string(command_)); }
  void fail(std::string message) {
    if (!error_) error_ = invalid_argument(std::move(message));
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  bool take_seen(bool* seen) {
    if (*seen) {
      fail(upper_name() + " given twice");
      return false;
    }
    *seen = true;
    return true;
  }
  std::string upper_name() const { return std::string(name_.data(), name_len_); }

  std::span<const std::string_view> args_;
  std::string_view command_;
  std::size_t i_ = 0;
  std::array<char, 16> name_{};
  std::size_t name_len_ = 0;
  std::string_view raw_;
  std::optional<Error> error_;
};

}  // namespace holdfast::resp
