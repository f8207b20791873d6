/* The CEL evaluator protocol (/work/shared/cel-conformance/README.md): one JSON request in,
 * one JSON reply out. This is the complete behaviour behind `holdfast rules eval --json` and
 * the conformance tool cel-eval-stdin.
 *
 *   request: {"expr": "<CEL source>", "bindings": {"name": TYPED, ...}}   ("bindings" optional)
 *   reply:   TYPED on success (see json_values.h), or {"error": "<message>"} for any failure:
 *            a malformed request, a bad binding, a compile error or an evaluation error.
 */
#pragma once

#include <string>
#include <string_view>

namespace holdfast::cel {

// Never throws: every failure becomes an {"error": ...} reply (if memory runs out even for
// that reply, the result is empty). The reply is one line of JSON, no trailing newline.
std::string eval_json_request(std::string_view request) noexcept;

}  // namespace holdfast::cel
