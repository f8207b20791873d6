#include "cli/remote.h"

#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/locks_output.h"

namespace holdfast::cli {
namespace {

constexpr const char* kTokenEnv = "HOLDFAST_TOKEN";

// --token if given (even empty), else $HOLDFAST_TOKEN. CLI11's envname would do the fallback
// too, but would not tell which of the two a refused token came from.
RemoteOptions with_token_source(RemoteOptions o) {
  if (!o.token_source.empty()) return o;
  if (const char* env = std::getenv(kTokenEnv); env != nullptr && *env != '\0') {
    o.token = env;
    o.token_source = kTokenEnv;
  }
  return o;
}

// What a person should do about an authentication refusal. The server answers NOAUTH when no
// token reached it, WRONGPASS (or UNAUTHENTICATED) when it has no member or function with the
// token it got.
std::string unauthenticated_message(const UnauthenticatedError& e, const RemoteOptions& o) {
  const std::string what = e.what();
  const bool none_sent = what.find("NOAUTH") != std::string::npos ||
                         (what.find("WRONGPASS") == std::string::npos && o.token_source.empty());
  if (none_sent) return "the server needs a token: pass --token or set " + std::string(kTokenEnv);
  const std::string source = o.token_source.empty() ? "the --server URL" : o.token_source;
  return "the server refused the token given by " + source +
         " (no member or function of its credentials has it)";
}

// A peer that answered, but not in RESP: most often the HTTP port given for the RESP one.
std::string protocol_message(const ProtocolError& e, const Client& client) {
  const auto protocol = e.details().find("protocol");
  if (protocol == e.details().end()) return e.what();
  if (protocol->second == "http")
    return client.server() +
           " answered with HTTP, not RESP: --server takes the RESP port (7420 by default)";
  return e.what();  // "HOST:PORT did not answer in RESP (...)"
}

// Local open mode accepts any token without looking at it: a token that would be refused
// elsewhere works here, which should not pass unnoticed.
void warn_if_open(Client& client, const RemoteOptions& o, std::string_view who) {
  if (o.token.empty()) return;
  if (client.server_info().mode != "open") return;
  std::cerr << who << ": warning: " << client.server()
            << " is in local open mode and does not check tokens; the token given by "
            << o.token_source << " was not checked\n";
}

}  // namespace

void add_remote_options(CLI::App* cmd, RemoteOptions& o) {
  cmd->add_option("--server", o.server,
                  "holdfast://host:port, rediss://host:port (TLS), unix:///path.sock or host:port: "
                  "the RESP port (default "
                  "127.0.0.1:7420)")
      ->envname("HOLDFAST_SERVER");
  cmd->add_option("--token", o.token, "bearer token (default: $HOLDFAST_TOKEN, or none)")
      ->each([&o](const std::string&) { o.token_source = "--token"; });
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

int run_remote(const RemoteOptions& given, std::string_view who,
               const std::function<int(Client&)>& body) {
  const RemoteOptions o = with_token_source(given);
  std::optional<Client> client;
  try {
    ClientOptions options;
    options.token = o.token;
    options.tls_ca = o.tls_ca;
    options.tls_cert = o.tls_cert;
    options.tls_key = o.tls_key;
    client.emplace(o.server, options);
    warn_if_open(*client, o, who);
    return body(*client);
  } catch (const Error& e) {
    if (o.json) {
      std::cout << json_error(e) << "\n";
    } else if (const auto* auth = dynamic_cast<const UnauthenticatedError*>(&e)) {
      std::cerr << who << ": " << unauthenticated_message(*auth, o) << "\n";
    } else if (const auto* protocol = dynamic_cast<const ProtocolError*>(&e); protocol && client) {
      std::cerr << who << ": " << protocol_message(*protocol, *client) << "\n";
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
