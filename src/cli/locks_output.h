// What `holdfast locks ...` prints: JSON with the wire's field names for scripts (--json), and
// aligned tables with relative times for people.
//
// JSON conventions (documented in docs/client.md and `holdfast locks --help`): times are
// integers, milliseconds since the Unix epoch, exactly as on the wire; booleans are true/false
// (the wire's 1/0); a missing value is null; an error is
// {"errorCode": ..., "message": ..., "details": {...}}, the shape of the HTTP API's errors.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "holdfast/client.h"

namespace holdfast::cli {

// A JSON string literal for s (quotes and escapes included).
std::string json_string(std::string_view s);

// Now, to the millisecond (the wire's resolution).
TimePoint current_time();
// "in 42 s", "3 min ago", "in 2 h", "never"... relative to `now`.
std::string relative_time(TimePoint at, TimePoint now);
// 2024-05-01T12:00:03.250Z
std::string iso_time(TimePoint at);

std::string json_hold(const LockHandle& hold);
// {"handle", "leaseExpiresAt", "holds": [hold objects]}, as LOCK.ACQUIREALL answers.
std::string json_group(const LockGroup& group);
std::string json_hold_info(const HoldInfo& hold);
std::string json_status(const LockStatus& status);
std::string json_list(const std::vector<HoldInfo>& holds, const std::string& next_cursor);
std::string json_renew(const RenewResult& result);
std::string json_release(const ReleaseResult& result);
std::string json_assignment(const Assignment& assignment);
std::string json_transfer(const TransferResult& transfer);
std::string json_unassign(bool released);
std::string json_holder(const HolderInfo& holder);
std::string json_error(const Error& error);

// "jobs:1 is held by user:local (owner run-1), expires in 42 s", "jobs:1 is free now", or
// "jobs:1 is held" when its status cannot be read: why an acquire did not get the key.
// A key that nobody holds but a lock-delay keeps closed: "jobs:1 is closed by a lock-delay,
// opens in 2 s".
std::string who_holds(Client& client, const std::string& key, TimePoint now);
// The same for each key of a multi-key request, joined by "; ".
std::string who_holds(Client& client, const std::vector<KeyRequest>& keys, TimePoint now);

// Said once on stderr before a wait (`--wait MS`) that a first attempt could not spare:
// "holdfast locks: waiting up to 10m: jobs:1 is held by user:alice (owner run-17), expires in
// 42 s", or, when the attempt was over the rate limit, "... waiting up to 10m: over the acquire
// rate limit, a slot frees in 42 s". `who` prefixes it.
void say_waiting(std::string_view who, Client& client, const std::vector<KeyRequest>& keys,
                 std::int64_t wait_ms, const RateLimitedError* limited = nullptr);

void print_hold(std::ostream& out, const LockHandle& hold, TimePoint now);
// The group's handle, holder and lease, then a KEY / TOKEN / MODE table of its holds.
void print_group(std::ostream& out, const LockGroup& group, TimePoint now);
void print_status(std::ostream& out, const LockStatus& status, TimePoint now);
void print_list(std::ostream& out, const std::vector<HoldInfo>& holds, TimePoint now);
void print_assignment(std::ostream& out, const Assignment& assignment, TimePoint now);
void print_holder(std::ostream& out, const HolderInfo& holder, TimePoint now);

}  // namespace holdfast::cli
