#include "support/tls_certs.h"

#include <atomic>
#include <fstream>
#include <stdexcept>

namespace holdfast::testing {
namespace {

void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run(argv);
  if (r.exit_code != 0) {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    throw std::runtime_error("openssl failed: " + line + "\n" + r.err);
  }
}

const std::vector<std::string> kNewKey = {"-newkey", "ec", "-pkeyopt",
                                          "ec_paramgen_curve:prime256v1", "-nodes"};

}  // namespace

TestCertificates::TestCertificates() {
  make_ca("ca", "/O=Holdfast tests/CN=Holdfast test CA");
  make_ca("other-ca", "/O=Elsewhere/CN=Another CA");
  issue("server", "/O=first/CN=localhost", "ca", 30,
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
}

void TestCertificates::make_ca(const std::string& name, const std::string& subject) const {
  std::vector<std::string> args = {"req", "-x509"};
  args.insert(args.end(), kNewKey.begin(), kNewKey.end());
  args.insert(args.end(),
              {"-keyout", dir() + "/" + name + ".key", "-out", dir() + "/" + name + ".pem", "-days",
               "30", "-subj", subject, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
               "keyUsage=critical,keyCertSign,cRLSign"});
  openssl(args);
}

TestCertificates::Pair TestCertificates::issue(const std::string& name, const std::string& subject,
                                               const std::string& ca_name, int days,
                                               const std::string& extensions) const {
  const std::string base = dir() + "/" + name;
  std::vector<std::string> req = {"req"};
  req.insert(req.end(), kNewKey.begin(), kNewKey.end());
  req.insert(req.end(), {"-keyout", base + ".key", "-out", base + ".csr", "-subj", subject});
  openssl(req);
  std::ofstream(base + ".ext") << "basicConstraints=CA:FALSE\n"
                               << "keyUsage=critical,digitalSignature,keyEncipherment\n"
                               << "subjectKeyIdentifier=hash\n"
                               << "authorityKeyIdentifier=keyid\n"
                               << extensions;
  static std::atomic<int> serial{1000};
  openssl({"x509", "-req", "-in", base + ".csr", "-CA", dir() + "/" + ca_name + ".pem", "-CAkey",
           dir() + "/" + ca_name + ".key", "-set_serial", std::to_string(++serial), "-days",
           std::to_string(days), "-extfile", base + ".ext", "-out", base + ".pem"});
  return {base + ".pem", base + ".key"};
}

TestCertificates::Pair TestCertificates::another_server(const std::string& org,
                                                        const std::string& alt_names) const {
  return issue("server-" + org, "/O=" + org + "/CN=localhost", "ca", 30,
               "subjectAltName=" + alt_names + "\nextendedKeyUsage=serverAuth\n");
}

TestCertificates::Pair TestCertificates::client(const std::string& common_name) const {
  return issue("client-" + common_name, "/CN=" + common_name, "ca", 30,
               "extendedKeyUsage=clientAuth\n");
}

TestCertificates::Pair TestCertificates::expired_client(const std::string& common_name) const {
  // -days -1: the validity ended a day after it began, yesterday (OpenSSL 3.0's x509 has no
  // -not_after).
  return issue("expired-" + common_name, "/CN=" + common_name, "ca", -1,
               "extendedKeyUsage=clientAuth\n");
}

TestCertificates::Pair TestCertificates::stranger(const std::string& common_name) const {
  return issue("stranger-" + common_name, "/CN=" + common_name, "other-ca", 30,
               "extendedKeyUsage=clientAuth\n");
}

std::string TestCertificates::subject(const std::string& pem_file) {
  RunResult r = run({"openssl", "x509", "-noout", "-subject", "-in", pem_file});
  if (r.exit_code != 0) throw std::runtime_error("openssl x509 failed: " + r.err);
  return r.out;
}

}  // namespace holdfast::testing
