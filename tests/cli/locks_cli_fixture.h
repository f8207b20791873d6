// What the `holdfast locks` CLI tests share: a server of their own, a RESP connection to it, a
// scratch folder, and the CLI run against that server (human output or --json).
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/server_process.h"

namespace holdfast::testing {

class LocksCliTest : public ::testing::Test {
 protected:
  // argv of `holdfast locks ARGS --server <this server>`; `command` follows a `--`.
  std::vector<std::string> argv(std::vector<std::string> args,
                                std::vector<std::string> command = {}) const {
    std::vector<std::string> v = {HOLDFAST_BIN, "locks"};
    v.insert(v.end(), args.begin(), args.end());
    v.insert(v.end(), {"--server", server.url()});
    if (!command.empty()) {
      v.push_back("--");
      v.insert(v.end(), command.begin(), command.end());
    }
    return v;
  }
  RunResult cli(std::vector<std::string> args) { return run(argv(std::move(args))); }
  // The same with --json: the exit status checked, the output parsed.
  boost::json::value cli_json(std::vector<std::string> args, int expected_exit) {
    args.push_back("--json");
    RunResult r = cli(args);
    EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    return boost::json::parse(r.out);
  }
  // The value of a "LABEL  value" line of human output, "" if absent.
  static std::string field(const std::string& out, const std::string& label) {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(label + " ", 0) == 0) {
        auto v = line.find_first_not_of(' ', label.size());
        return v == std::string::npos ? "" : line.substr(v);
      }
    }
    return "";
  }
  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  ServerProcess server;
  RespClient resp = server.client();
  TempDir dir;
};

}  // namespace holdfast::testing
