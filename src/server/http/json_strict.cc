#include "server/http/json_strict.h"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>
#include <optional>
#include <string>
#include <vector>

namespace holdfast::http {
namespace {

namespace json = boost::json;
using boost::system::error_code;

// The handler boost::json::parser uses (it builds the value on a value_stack), plus the keys
// of every object still open, to find a key given twice before the value stack drops it.
struct StrictHandler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack st;
  // The keys of the open objects, outermost first; each open object's begin in `keys`. A
  // request body has a handful of keys, so a linear look beats a set.
  std::vector<std::string> keys;
  std::vector<std::size_t> starts;
  std::string key;  // the key being read, when it comes in parts
  std::optional<std::string> duplicate;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) {
    starts.push_back(keys.size());
    return true;
  }
  bool on_object_end(std::size_t n, error_code&) {
    keys.resize(starts.back());
    starts.pop_back();
    st.push_object(n);
    return true;
  }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t n, error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    key.append(s.data(), s.size());
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, error_code& ec) {
    key.append(s.data(), s.size());
    for (std::size_t i = starts.back(); i < keys.size(); ++i) {
      if (keys[i] == key) {
        duplicate = std::move(key);
        ec = make_error_code(boost::system::errc::invalid_argument);
        return false;
      }
    }
    keys.push_back(std::move(key));
    key.clear();
    st.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view, error_code&) { return true; }
  bool on_int64(std::int64_t i, json::string_view, error_code&) {
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, error_code&) {
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view, error_code&) {
    st.push_double(d);
    return true;
  }
  bool on_bool(bool b, error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }
};

}  // namespace

Result<json::value> parse_json_strict(std::string_view body) {
  json::basic_parser<StrictHandler> p{json::parse_options{}};
  p.handler().st.reset();
  error_code ec;
  const std::size_t n = p.write_some(false, body.data(), body.size(), ec);
  if (const auto& twice = p.handler().duplicate)
    return invalid_argument(*twice + " is given twice").with("field", *twice);
  if (!ec && n < body.size()) ec = json::error::extra_data;
  if (ec) return invalid_argument("body is not valid JSON: " + ec.message());
  return p.handler().st.release();
}

}  // namespace holdfast::http
