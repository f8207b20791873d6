// Loading the TLS settings ([tls], --tls-*) into a context for the listeners, at start-up and
// on SIGHUP. Every file is read and checked here, so that a mistake stops the start (or keeps
// the previous certificate on SIGHUP) with one line that names the file and what is wrong:
//
//   tls: cannot read --tls-key /etc/holdfast/key.pem: No such file or directory
//   tls: the key in --tls-key k.pem does not match the certificate in --tls-cert c.pem
//   tls: --tls-ca ca.pem has no certificate
#pragma once

#include <string>

#include "core/error.h"
#include "server/config.h"
#include "server/tls/context.h"

namespace holdfast::tls {

struct Loaded {
  ServerContextPtr context;
  // For the log: "CN=db.example.com, valid until 2027-12-06 03:12:01 GMT".
  std::string certificate;
  // A warning about the certificate that does not stop the start (expired, not yet valid);
  // empty when none.
  std::string warning;
};

// TLS 1.2 and 1.3 with OpenSSL's default ciphers, the chain of config.cert with config.key, and
// with config.ca the client verification config.client_auth asks for. kInvalidArgument with the
// line above when something does not load.
Result<Loaded> load_server_context(const TlsConfig& config);

}  // namespace holdfast::tls
