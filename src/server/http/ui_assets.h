// The web page's files (src/server/ui/), built into the binary by cmake/embed_files.cmake.
#pragma once

#include <span>
#include <string_view>

namespace holdfast::http {

struct UiAsset {
  std::string_view path;          // below /ui/, e.g. "index.html", "app.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view etag;          // quoted, e.g. "\"3f2a...\""
  std::string_view body;
};

std::span<const UiAsset> ui_assets();

}  // namespace holdfast::http
