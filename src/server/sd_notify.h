// Telling the service manager how the server is doing: systemd's notification protocol
// (sd_notify(3)), without libsystemd. Under a unit of Type=notify, systemd passes the address
// of a datagram socket in $NOTIFY_SOCKET; the server sends "READY=1" once every listener is
// bound (the moment it prints its ready line) and "STOPPING=1" when it begins to shut down.
//
// The protocol is one datagram per message, newline-separated KEY=VALUE assignments, to that
// AF_UNIX socket: a path when the variable starts with '/', a name in the abstract namespace
// when it starts with '@'. Without the variable there is nobody to tell, and nothing is sent.
#pragma once

#include <string_view>

#include "core/error.h"

namespace holdfast {

// Sends `state` (e.g. "READY=1\nSTATUS=...") to $NOTIFY_SOCKET. Ok when the variable is unset
// or empty (not run by a service manager) or when the datagram went out; otherwise an error
// naming the socket and the reason. Never blocks on a full socket (MSG_DONTWAIT).
Status notify_service_manager(std::string_view state);

}  // namespace holdfast
