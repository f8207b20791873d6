#include "cli/remote.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/locks_output.h"

namespace holdfast::cli {

void add_remote_options(CLI::App* cmd, RemoteOptions& o) {
  cmd->add_option("--server", o.server,
                  "holdfast://host:port, unix:///path.sock or host:port (default 127.0.0.1:7420)")
      ->envname("HOLDFAST_SERVER");
  cmd->add_option("--token", o.token, "bearer token (default: $HOLDFAST_TOKEN, or none)")
      ->envname("HOLDFAST_TOKEN");
  cmd->add_flag("--json", o.json, "print JSON with the wire's field names");
}

int exit_code_for(const Error& e) {
  if (dynamic_cast<const ConnectionError*>(&e) || dynamic_cast<const UnavailableError*>(&e))
    return kExitUnreachable;
  if (dynamic_cast<const UnauthenticatedError*>(&e) || dynamic_cast<const AccessDeniedError*>(&e) ||
      dynamic_cast<const ForbiddenError*>(&e))
    return kExitAccess;
  if (dynamic_cast<const LockTimeoutError*>(&e) || dynamic_cast<const RateLimitedError*>(&e) ||
      dynamic_cast<const LockHeldError*>(&e) || dynamic_cast<const NotHolderError*>(&e))
    return kExitNotAcquired;
  return kExitUsage;
}

int run_remote(const RemoteOptions& o, std::string_view who,
               const std::function<int(Client&)>& body) {
  try {
    ClientOptions options;
    options.token = o.token;
    Client client(o.server, options);
    return body(client);
  } catch (const Error& e) {
    if (o.json) {
      std::cout << json_error(e) << "\n";
    } else {
      std::cerr << who << ": " << e.what() << "\n";
    }
    return exit_code_for(e);
  } catch (const std::exception& e) {
    // Not a server answer (e.g. no thread could be started): the operation did not happen.
    std::cerr << who << ": " << e.what() << "\n";
    return kExitNotAcquired;
  }
}

}  // namespace holdfast::cli
