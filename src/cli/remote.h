// What every client subcommand (locks, rules) shares: --server/--token/--json, the TLS files
// (--tls-ca/--tls-cert/--tls-key, for rediss:// servers), building the Client, and mapping the
// outcome to the exit codes of docs/reference.md section 8 and to messages that name the flag to
// fix rather than the wire's error line.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "holdfast/client.h"

namespace holdfast::cli {

struct RemoteOptions {
  std::string server = "127.0.0.1:7420";
  std::string token;
  std::string tls_ca, tls_cert, tls_key;
  // Where `token` came from, for messages: "--token", "HOLDFAST_TOKEN", or empty (none given).
  std::string token_source;
  bool json = false;
};

// Adds --server (or $HOLDFAST_SERVER), --token (or $HOLDFAST_TOKEN), the TLS options below and
// --json to `cmd`.
void add_remote_options(CLI::App* cmd, RemoteOptions& options);
// Adds --tls-ca, --tls-cert and --tls-key (or $HOLDFAST_TLS_CA, $HOLDFAST_TLS_CERT,
// $HOLDFAST_TLS_KEY): the files for a rediss:// server.
void add_tls_options(CLI::App* cmd, std::string& ca, std::string& cert, std::string& key);

// 4 unreachable or unavailable; 3 authentication or access; 1 not acquired (held, timed out,
// rate limited, not the holder); 2 anything else the server refused (usage).
int exit_code_for(const Error& e);

// Builds the client, runs `body`, and turns an exception into a message (or a JSON error on
// stdout with --json) and its exit code. `who` prefixes messages ("holdfast locks"). With a
// token, a server in local open mode (which checks no token) gets a warning on stderr first.
int run_remote(const RemoteOptions& options, std::string_view who,
               const std::function<int(Client&)>& body);

}  // namespace holdfast::cli
