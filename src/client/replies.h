// From reply trees to the public value types (include/holdfast/lock_handle.h). Field names are
// the wire names of docs/resp.md. A reply missing a required field throws ProtocolError: the
// peer is not the server this client was written for.
#pragma once

#include "client/resp_codec.h"
#include "holdfast/lock_handle.h"

namespace holdfast::inline v0::client_internal {

LockHandle to_lock_handle(const Reply& reply);
// LOCK.ACQUIREALL / LOCK.TRYALL: {handle, leaseExpiresAt, holds: [hold maps]}.
LockGroup to_lock_group(const Reply& reply);
HoldInfo to_hold_info(const Reply& reply);
LockStatus to_status(const Reply& reply);
ListPage to_list_page(const Reply& reply);
RenewResult to_renew_result(const Reply& reply);
ReleaseResult to_release_result(const Reply& reply);
Assignment to_assignment(const Reply& reply);
TransferResult to_transfer_result(const Reply& reply);
HolderInfo to_holder_info(const Reply& reply);

}  // namespace holdfast::inline v0::client_internal
