// Why a TLS handshake failed, as the metric holdfast_tls_handshake_failures_total{reason} and
// the debug log line name it. Classified from OpenSSL's reason code (classify() in
// handshake.h); kept here, without OpenSSL, so that the metrics need only the names.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace holdfast::tls {

enum class HandshakeFailure : unsigned char {
  kPlaintext,             // the client spoke something else than TLS (RESP, HTTP) to the port
  kProtocolVersion,       // a TLS version below 1.2, or no cipher both sides have
  kNoClientCertificate,   // --tls-client-auth require, and the client sent none
  kBadClientCertificate,  // the client's certificate does not chain to the CA, or has expired
  kPeerRefused,           // the client refused ours (an alert: unknown CA, bad certificate)
  kTimeout,               // not finished within [tls] handshakeTimeoutMs
  kClosed,                // the client went away in the middle of it
  kOther,
};

inline constexpr std::size_t kHandshakeFailureKinds = 8;

inline constexpr std::array<std::string_view, kHandshakeFailureKinds> kHandshakeFailureNames = {
    "plaintext",
    "protocol_version",
    "no_client_certificate",
    "bad_client_certificate",
    "peer_refused",
    "timeout",
    "closed",
    "other"};

inline std::string_view failure_name(HandshakeFailure f) {
  return kHandshakeFailureNames[static_cast<std::size_t>(f)];
}

}  // namespace holdfast::tls
