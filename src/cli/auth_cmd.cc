// holdfast auth: helpers for the credentials file.
//   hash-token [TOKEN]   prints the tokenSha256 of TOKEN (read from stdin when not given, so
//                        it stays out of shell history)
//   new-token            prints a fresh random token and its tokenSha256
#include <sys/random.h>

#include <iostream>
#include <memory>
#include <string>

#include "auth/credentials.h"
#include "cli/commands.h"

namespace holdfast::cli {

void add_auth_command(CLI::App& app, int& exit_code) {
  CLI::App* auth = app.add_subcommand("auth", "Helpers for the credentials file");
  auth->require_subcommand(1);

  auto token = std::make_shared<std::string>();
  CLI::App* hash = auth->add_subcommand(
      "hash-token", "Print the tokenSha256 of a bearer token (stdin if omitted)");
  hash->add_option("token", *token, "the bearer token");
  hash->callback([token, hash, &exit_code] {
    std::string t = *token;
    if (hash->count("token") == 0) {
      std::getline(std::cin, t);
      if (!t.empty() && t.back() == '\r') t.pop_back();
    }
    if (t.empty()) {
      std::cerr << "holdfast auth hash-token: the token is empty\n";
      exit_code = kExitUsage;
      return;
    }
    std::cout << to_hex(sha256(t)) << "\n";
  });

  CLI::App* fresh =
      auth->add_subcommand("new-token", "Print a new random token and its tokenSha256");
  fresh->callback([&exit_code] {
    unsigned char raw[32];
    if (getrandom(raw, sizeof(raw), 0) != static_cast<ssize_t>(sizeof(raw))) {
      std::cerr << "holdfast auth new-token: getrandom failed\n";
      exit_code = kExitUnreachable;
      return;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string t = "hf_";
    for (unsigned char b : raw) {
      t.push_back(kHex[b >> 4]);
      t.push_back(kHex[b & 15]);
    }
    std::cout << "token       " << t << "\ntokenSha256 " << to_hex(sha256(t)) << "\n";
  });
}

}  // namespace holdfast::cli
