// The report's part for (j): Holdfast and Redis over TLS beside themselves over plain TCP, the
// pairs of (a) on connections opened (handshake done) before the window, as client libraries
// reuse theirs. The goal row (TLS costs Holdfast at most 15 % of its pairs/s) is in the goals
// table; this is the figures and each server's own TLS ÷ TCP.
#pragma once

#include <ostream>

#include "suite.h"

namespace holdfast::bench {

// Nothing when (j) did not run.
void tls_table(std::ostream& out, const SuiteResults& results);

}  // namespace holdfast::bench
