// What the RESP and HTTP front ends share about the end of a TLS handshake: why one failed
// (counted in holdfast_tls_handshake_failures_total and logged in one debug line, since a
// plaintext client or a port scanner is no reason for more), and who a verified client
// certificate names.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/principal.h"
#include "server/tls/handshake_failure.h"

namespace holdfast {
class Authenticator;
class Metrics;
}  // namespace holdfast

namespace holdfast::tls {

// OpenSSL's reason for a failed handshake (ERR_GET_REASON of the error) as a HandshakeFailure.
HandshakeFailure classify_failure(unsigned long error);

// The subject common name of the client's certificate, when it sent one that verified (chains
// to the CA, in its validity period) and its subject has exactly one common name.
std::optional<std::string> verified_common_name(SSL* ssl);

// The caller whose certCommonName the verified client certificate carries; nullopt without
// one, with an unknown name, or in local open mode (`auth` null), where a certificate changes
// nothing.
std::optional<Principal> certificate_caller(SSL* ssl, const Authenticator* auth);

// Counts the failure (metrics may be null) and logs it at debug level.
void report_failure(Metrics* metrics, HandshakeFailure why, std::string_view detail,
                    std::uint64_t connection, std::string_view peer);

}  // namespace holdfast::tls
