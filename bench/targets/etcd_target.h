// etcd as a lock service, through its JSON gateway (no C++ gRPC client is packaged):
//   acquire = POST /v3/lease/grant {TTL}  then
//             POST /v3/kv/txn  if create_revision(key) == 0 then put(key, lease)
//   release = POST /v3/lease/revoke {ID}: revoking the lock's own lease deletes its key in the
//             same raft entry, so release is one request, leaves no lease to expire later, and
//             cannot delete a key that someone else acquired after our lease ran out (a plain
//             delete could).
// A lease granted for an attempt that lost the race is kept for the connection's next
// attempt while it has most of its TTL left, as etcd's own lock recipe keeps one session
// lease per client; a retry loop costs one request per attempt, not two.
// The server is a single-member cluster on loopback ports in a temporary folder.
#pragma once

#include <memory>

#include "../target.h"

namespace holdfast::bench {

std::unique_ptr<Target> make_etcd_target();

}  // namespace holdfast::bench
