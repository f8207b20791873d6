// Certificates for TLS tests, made with the `openssl` command when the test runs, in a folder
// of their own that goes with the object: a CA, the server's certificate (CN localhost, for
// 127.0.0.1 and localhost), client certificates signed by that CA (by common name; expired
// ones too), and a second CA that the server does not trust with its own client certificate.
// EC P-256 keys: quick to make, accepted by every client the tests use.
#pragma once

#include <string>

#include "support/process.h"

namespace holdfast::testing {

class TestCertificates {
 public:
  struct Pair {
    std::string cert, key;  // PEM files
  };

  TestCertificates();  // throws std::runtime_error when openssl fails

  const std::string& dir() const { return dir_.path(); }
  // The CA every certificate below chains to (except other_ca's).
  std::string ca() const { return dir() + "/ca.pem"; }
  // The server's certificate: CN localhost, subjectAltName IP:127.0.0.1 and DNS:localhost.
  Pair server() const { return {dir() + "/server.pem", dir() + "/server.key"}; }
  // Another certificate for the server, issued by the same CA with organization `org` in its
  // subject (a rotation: the new certificate tells itself apart by it), for the names in
  // `alt_names` (an openssl subjectAltName value).
  Pair another_server(const std::string& org,
                      const std::string& alt_names = "IP:127.0.0.1,DNS:localhost") const;
  // A client certificate with subject CN `common_name`, signed by the CA.
  Pair client(const std::string& common_name) const;
  // The same, but its validity ended yesterday.
  Pair expired_client(const std::string& common_name) const;
  // A CA the server does not trust, and a client certificate it signed.
  std::string other_ca() const { return dir() + "/other-ca.pem"; }
  Pair stranger(const std::string& common_name) const;

  // `openssl x509 -noout -subject` of a PEM certificate (or of the first in a chain).
  static std::string subject(const std::string& pem_file);

 private:
  // Signs a new key's request for `subject` with the CA in `ca_name`.{pem,key}, valid for
  // `days` (negative: ended that many days ago), with the extensions in `extensions`.
  Pair issue(const std::string& name, const std::string& subject, const std::string& ca_name,
             int days, const std::string& extensions) const;
  void make_ca(const std::string& name, const std::string& subject) const;

  TempDir dir_;
};

}  // namespace holdfast::testing
