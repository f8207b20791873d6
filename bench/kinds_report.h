// The report's part for (i), Holdfast's lock kinds on one hot key: the exclusive lock, readers
// and writers, and a semaphore, side by side per target. No peer has these modes, so the
// figures are absolute; each kind's figure is taken in the same rounds as the others.
#pragma once

#include <ostream>

#include "suite.h"

namespace holdfast::bench {

// Nothing when (i) did not run.
void kinds_table(std::ostream& out, const SuiteResults& results);

}  // namespace holdfast::bench
