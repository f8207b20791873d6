// What the TLS suites share: one set of certificates per suite (made with openssl, see
// support/tls_certs.h), the server flags that use them, and the third-party tools the tests
// drive over TLS: redis-cli --tls, curl, openssl s_client; and the server's metrics.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/server_process.h"
#include "support/tls_certs.h"

namespace holdfast::testing {

class TlsSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs_ = std::make_unique<TestCertificates>(); }
  static void TearDownTestSuite() { certs_.reset(); }
  static const TestCertificates& certs() { return *certs_; }

  // --tls-cert, --tls-key (the server's certificate) and, unless empty, --tls-ca and
  // --tls-client-auth.
  static std::vector<std::string> tls_flags(const std::string& client_auth = "",
                                            bool with_ca = true);

  // redis-cli --tls --cacert CA -p PORT [--cert C --key K] ARGS..., `input` on stdin (one
  // command a line on one connection when ARGS has none).
  static RunResult redis_cli(int port, const std::vector<std::string>& args,
                             const TestCertificates::Pair* client = nullptr,
                             const std::string& input = "", const std::string& ca = "");
  // curl -sS --cacert CA [--cert C --key K] -w '\n%{http_code}' ARGS...
  static RunResult curl(const std::vector<std::string>& args,
                        const TestCertificates::Pair* client = nullptr);
  // openssl s_client to 127.0.0.1:PORT trusting the CA, with nothing to send: exit code 0
  // when the handshake succeeded.
  static RunResult s_client(int port, const std::vector<std::string>& extra = {});
  // The value of one series of GET /metrics over HTTPS ("name{label=\"v\"}"), with `client`'s
  // certificate if given.
  static double metric(const ServerProcess& server, const std::string& series,
                       const TestCertificates::Pair* client = nullptr);
  // The value of `field` in redis-cli's flat output of a reply with fields (the line after
  // the field's name).
  static std::string field(const std::string& redis_cli_output, const std::string& name);

 private:
  static std::unique_ptr<TestCertificates> certs_;
};

}  // namespace holdfast::testing
