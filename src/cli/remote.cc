#include "cli/remote.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/locks_output.h"

namespace holdfast::cli {

void add_remote_options(CLI::App* cmd, RemoteOptions& o) {
  cmd->add_option("--server", o.server,
                  "holdfast://host:port, rediss://host:port (TLS), unix:///path.sock or host:port "
                  "(default 127.0.0.1:7420)")
      ->envname("HOLDFAST_SERVER");
  cmd->add_option("--token", o.token, "bearer token (default: $HOLDFAST_TOKEN, or none)")
      ->envname("HOLDFAST_TOKEN");
  add_tls_options(cmd, o.tls_ca, o.tls_cert, o.tls_key);
  cmd->add_flag("--json", o.json, "print JSON with the wire's field names");
}

void add_tls_options(CLI::App* cmd, std::string& ca, std::string& cert, std::string& key) {
  cmd->add_option("--tls-ca", ca,
                  "rediss://: PEM CA certificates to trust (default: $HOLDFAST_TLS_CA, or the "
                  "system's)")
      ->envname("HOLDFAST_TLS_CA");
  cmd->add_option("--tls-cert", cert,
                  "rediss://: PEM client certificate, the caller to a server that knows its name "
                  "(default: $HOLDFAST_TLS_CERT, or none)")
      ->envname("HOLDFAST_TLS_CERT");
  cmd->add_option("--tls-key", key, "rediss://: PEM key of --tls-cert (default: $HOLDFAST_TLS_KEY)")
      ->envname("HOLDFAST_TLS_KEY");
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
    options.tls_ca = o.tls_ca;
    options.tls_cert = o.tls_cert;
    options.tls_key = o.tls_key;
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
