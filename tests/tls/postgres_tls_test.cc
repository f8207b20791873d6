// A node over a PostgreSQL that speaks TLS only (ssl = on, non-TLS TCP clients refused by its
// pg_hba.conf), with the certificate check of libpq's sslmode=verify-full in the --store URL;
// the node's own listeners speak TLS too, so a client reaches the locks over TLS end to end.
#include "holdfast/client.h"
#include "support/postgres.h"
#include "tls/tls_tools.h"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;

class PostgresTls : public TlsSuite {
 protected:
  TestPostgres pg{testing::PostgresTls{certs().server().cert, certs().server().key}};
  // libpq's own TLS settings: verify the server's certificate against `ca`, and its name.
  std::string store_url(const std::string& ca) const {
    return pg.url() + "?sslmode=verify-full&sslrootcert=" + ca;
  }
};

TEST_F(PostgresTls, ANodeLocksOverVerifiedTlsToItsDatabase) {
  const std::string url = fresh_store_url(store_url(certs().ca()));
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--store", url});
  ServerProcess node(flags);
  Client client("rediss://127.0.0.1:" + std::to_string(node.port()), {.tls_ca = certs().ca()});
  auto hold = client.try_acquire("pg:tls", {.ttl = 30s});
  ASSERT_TRUE(hold.has_value());
  const auto status = client.status("pg:tls");
  ASSERT_TRUE(status.held());
  EXPECT_EQ(status.hold->token, hold->token);
  EXPECT_TRUE(client.release(*hold).released);
  // Every client of the database but this query's own session is the node's, over TLS.
  SqlSession sql(url);
  EXPECT_NE(sql.value("SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) "
                      "WHERE ssl AND backend_type = 'client backend' AND pid <> pg_backend_pid()"),
            "0");
  EXPECT_EQ(sql.value("SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) "
                      "WHERE NOT ssl AND backend_type = 'client backend'"),
            "0");
}

TEST_F(PostgresTls, ANodeRefusesADatabaseItCannotVerifyAndTheDatabaseRefusesPlainText) {
  const std::string url = fresh_store_url(store_url(certs().ca()));
  TempDir data;
  auto serve = [&](const std::string& store) {
    return run({HOLDFAST_BIN, "serve", "--data-dir", data.path(), "--listen", "127.0.0.1:0",
                "--http", "", "--store", store});
  };
  // The database's certificate does not chain to the CA the URL names.
  RunResult untrusted =
      serve(url.substr(0, url.find("sslrootcert=")) + "sslrootcert=" + certs().other_ca() +
            url.substr(url.find('&', url.find("sslrootcert="))));
  EXPECT_EQ(untrusted.exit_code, 1);
  EXPECT_NE(untrusted.err.find("certificate verify failed"), std::string::npos) << untrusted.err;
  // Without TLS the database turns the node away.
  RunResult plain = serve(pg.url() + "?sslmode=disable");
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_NE(plain.err.find("no encryption"), std::string::npos) << plain.err;
}

}  // namespace
}  // namespace holdfast::testing
