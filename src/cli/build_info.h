// What `holdfast --version` says: the version, and the commit and date of the build, fixed when
// the build is configured (src/cli/CMakeLists.txt writes build_info.cc).
#pragma once

#include <string>

namespace holdfast::cli {

struct BuildInfo {
  const char* version;  // the project's, e.g. "0.1.0"
  const char* commit;   // `git rev-parse --short HEAD` of the source; "unknown" outside a checkout
  const char* date;     // YYYY-MM-DD, UTC: SOURCE_DATE_EPOCH's if set, else the configure date
};
extern const BuildInfo kBuildInfo;

// "holdfast 0.1.0 (commit abc1234, built 2026-12-06)"
inline std::string version_line() {
  return std::string("holdfast ") + kBuildInfo.version + " (commit " + kBuildInfo.commit +
         ", built " + kBuildInfo.date + ")";
}

}  // namespace holdfast::cli
