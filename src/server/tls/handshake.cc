#include "server/tls/handshake.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include "auth/authenticator.h"
#include "server/logging.h"
#include "server/metrics.h"

namespace holdfast::tls {

HandshakeFailure classify_failure(unsigned long error) {
  if (ERR_GET_LIB(error) != ERR_LIB_SSL) return HandshakeFailure::kOther;
  const int reason = ERR_GET_REASON(error);
  switch (reason) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_UNEXPECTED_RECORD:
    case SSL_R_UNEXPECTED_MESSAGE:
      return HandshakeFailure::kPlaintext;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_INAPPROPRIATE_FALLBACK:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      return HandshakeFailure::kProtocolVersion;
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return HandshakeFailure::kNoClientCertificate;
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
    case SSL_R_NO_CERTIFICATES_RETURNED:
      return HandshakeFailure::kBadClientCertificate;
    default:
      break;
  }
  // Reasons from SSL_AD_REASON_OFFSET up are alerts the peer sent: it refused the handshake.
  if (reason >= SSL_AD_REASON_OFFSET) return HandshakeFailure::kPeerRefused;
  return HandshakeFailure::kOther;
}

std::optional<std::string> verified_common_name(SSL* ssl) {
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  X509_NAME* subject = X509_get_subject_name(peer);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  // No common name, or several: nothing to match a caller by.
  if (at < 0 || X509_NAME_get_index_by_NID(subject, NID_commonName, at) >= 0) return std::nullopt;
  unsigned char* utf8 = nullptr;
  const int n =
      ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at)));
  if (n < 0) return std::nullopt;
  std::string name(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  if (name.empty() || name.find('\0') != std::string::npos) return std::nullopt;
  return name;
}

std::optional<Principal> certificate_caller(SSL* ssl, const Authenticator* auth) {
  if (auth == nullptr) return std::nullopt;
  auto name = verified_common_name(ssl);
  if (!name) return std::nullopt;
  return auth->authenticate_certificate(*name);
}

void report_failure(Metrics* metrics, HandshakeFailure why, std::string_view detail,
                    std::uint64_t connection, std::string_view peer) {
  if (metrics != nullptr) metrics->tls_handshake_failed(why);
  log_event(LogLevel::kDebug, "TLS handshake failed",
            {{"connection", static_cast<std::int64_t>(connection)},
             {"addr", std::string(peer)},
             {"reason", std::string(failure_name(why))},
             {"detail", std::string(detail)}});
}

}  // namespace holdfast::tls
