// The report's part for (k) and (l): what lock-event watchers cost the lock path, and PUBLISH
// to many subscribers against Redis, both from figures taken in the same rounds.
#pragma once

#include <ostream>

#include "suite.h"

namespace holdfast::bench {

// Nothing when neither ran.
void fanout_tables(std::ostream& out, const SuiteResults& results);

}  // namespace holdfast::bench
