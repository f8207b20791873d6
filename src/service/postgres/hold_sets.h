// The set forms of the batched hold statements (pg_batch.h, "Set statements"): the grant attempts
// of a batch, or its releases by handle, on distinct keys as one statement each, answered per
// caller exactly as the statement run alone would have answered.
#pragma once

#include <vector>

#include "service/postgres/pg_batch.h"
#include "service/postgres/pg_pool.h"

namespace holdfast::pg {

// The statements to prepare (their names are those of hold_set_forms()).
std::vector<Statement> hold_set_statements();
// hf_acquire's and hf_release_handle's set forms.
std::vector<CommitBatcher::SetForm> hold_set_forms();

}  // namespace holdfast::pg
