// `holdfast locks` against the real server: each subcommand's human and --json output and
// exit code (0 done, 1 not acquired, 2 usage, 3 access, 4 unreachable).
#include <gtest/gtest.h>

#include <signal.h>

#include <boost/json.hpp>

#include "client/fake_server.h"
#include "locks_cli_fixture.h"
#include "support/server_process.h"

namespace holdfast::testing {
namespace {

namespace json = boost::json;

class LocksCli : public LocksCliTest {
 protected:
  // "in N s..." with N at most `seconds` and not below half of it: the time left, which a
  // machine busy with other builds may take seconds to print.
  static bool expires_in_about(const std::string& text, int seconds) {
    for (int n = seconds; n >= seconds / 2; --n)
      if (text.rfind("in " + std::to_string(n) + " s", 0) == 0) return true;
    return false;
  }
};

TEST_F(LocksCli, AcquirePrintsTheHoldWithItsHandle) {
  RunResult r = cli({"acquire", "jobs:import", "--ttl", "60000", "--owner", "run-17"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string handle = field(r.out, "HANDLE");
  EXPECT_GE(handle.size(), 20u) << r.out;
  EXPECT_EQ(field(r.out, "KEY"), "jobs:import");
  EXPECT_EQ(field(r.out, "OWNER"), "run-17");
  EXPECT_EQ(field(r.out, "HELD BY"), "user:local");
  EXPECT_TRUE(expires_in_about(field(r.out, "EXPIRES"), 60)) << r.out;
  EXPECT_NE(r.out.find("holdfast locks release jobs:import --handle " + handle), std::string::npos);
  EXPECT_EQ(resp.call({"LOCK.RELEASE", "jobs:import", handle}).number("released"), 1)
      << "the printed handle works";
}

TEST_F(LocksCli, AcquireJsonIsAHoldObjectWithWireFieldNames) {
  json::object hold = cli_json({"acquire", "k", "--ttl", "5000"}, 0).as_object();
  for (const char* f : {"key", "handle", "token", "heldBy", "owner", "acquiredAt", "leaseExpiresAt",
                        "scope", "kind"})
    EXPECT_TRUE(hold.contains(f)) << f;
  EXPECT_EQ(hold["key"].as_string(), "k");
  EXPECT_TRUE(hold["owner"].is_null());
  EXPECT_EQ(hold["leaseExpiresAt"].as_int64() - hold["acquiredAt"].as_int64(), 5000)
      << "times are ms since epoch";
  EXPECT_EQ(hold["scope"].as_string(), "lease");
  EXPECT_EQ(hold["kind"].as_string(), "handle");
  EXPECT_GT(hold["token"].as_int64(), 0);
}

TEST_F(LocksCli, AcquireOfAHeldKeyExitsOne) {
  resp.call({"LOCK.TRY", "k", "TTL", "60000", "OWNER", "someone"});
  RunResult r = cli({"acquire", "k"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("not acquired: k is held by user:local (owner someone), expires in ", 0),
            0u)
      << r.out;
  EXPECT_TRUE(cli_json({"acquire", "k"}, 1).is_null()) << "the wire's nil";

  RunResult waited = cli({"acquire", "k", "--wait", "200"});
  EXPECT_EQ(waited.exit_code, 1);
  EXPECT_NE(waited.out.find("no grant within 200ms"), std::string::npos) << waited.out;
  json::object e = cli_json({"acquire", "k", "--wait", "200"}, 1).as_object();
  EXPECT_EQ(e["errorCode"].as_string(), "LOCK_TIMEOUT");
  EXPECT_EQ(e["details"].as_object()["key"].as_string(), "k");
  EXPECT_EQ(e["details"].as_object()["timeoutMs"].as_int64(), 200);
}

TEST_F(LocksCli, AcquireWithWaitGetsTheKeyWhenTheLeaseEnds) {
  resp.call({"LOCK.TRY", "k", "TTL", "300"});
  json::object hold = cli_json({"acquire", "k", "--wait", "10000"}, 0).as_object();
  EXPECT_EQ(hold["key"].as_string(), "k");
}

TEST_F(LocksCli, StatusOfFreeAndHeldKeys) {
  RunResult free = cli({"status", "free"});
  EXPECT_EQ(free.exit_code, 0);
  EXPECT_EQ(field(free.out, "HELD"), "no");
  EXPECT_EQ(field(free.out, "WAITERS"), "0");
  json::object free_json = cli_json({"status", "free"}, 0).as_object();
  EXPECT_EQ(free_json, (json::object{{"key", "free"}, {"held", false}, {"waiters", 0}}));

  auto hold = resp.call({"LOCK.TRY", "k", "TTL", "60000", "OWNER", "run-1"});
  RunResult held = cli({"status", "k"});
  EXPECT_EQ(held.exit_code, 0);
  EXPECT_EQ(field(held.out, "HELD"), "yes");
  EXPECT_EQ(field(held.out, "OWNER"), "run-1");
  EXPECT_EQ(field(held.out, "TOKEN"), std::to_string(hold.number("token")));
  EXPECT_TRUE(expires_in_about(field(held.out, "EXPIRES"), 60)) << held.out;
  EXPECT_EQ(held.out.find(hold.text("handle")), std::string::npos)
      << "status never shows the handle";

  json::object s = cli_json({"status", "k"}, 0).as_object();
  EXPECT_EQ(s["held"], true);
  EXPECT_EQ(s["heldBy"].as_string(), "user:local");
  EXPECT_EQ(s["owner"].as_string(), "run-1");
  EXPECT_EQ(s["token"].as_int64(), hold.number("token"));
  EXPECT_EQ(s["leaseExpiresAt"].as_int64(), hold.number("leaseExpiresAt"));
  EXPECT_EQ(s["waiters"].as_int64(), 0);
  EXPECT_FALSE(s.contains("handle"));
}

TEST_F(LocksCli, ListAsATableAndAsJsonWithPaging) {
  resp.call({"LOCK.TRY", "import:a", "TTL", "60000", "OWNER", "run-1"});
  resp.call({"LOCK.TRY", "import:b", "TTL", "60000"});
  resp.call({"LOCK.TRY", "other", "TTL", "60000"});
  RunResult table = cli({"list", "--match", "import:*"});
  EXPECT_EQ(table.exit_code, 0);
  std::istringstream lines(table.out);
  std::string header, row1, row2, extra;
  std::getline(lines, header);
  std::getline(lines, row1);
  std::getline(lines, row2);
  EXPECT_FALSE(std::getline(lines, extra)) << table.out;
  EXPECT_EQ(header.rfind("KEY", 0), 0u);
  EXPECT_EQ(header.find("EXPIRES"), row1.rfind("in ")) << "columns are aligned:\n" << table.out;
  EXPECT_TRUE(expires_in_about(row1.substr(row1.rfind("in ")), 60)) << table.out;
  EXPECT_NE(table.out.find("run-1"), std::string::npos);

  json::object all = cli_json({"list"}, 0).as_object();
  EXPECT_EQ(all["locks"].as_array().size(), 3u);
  EXPECT_EQ(all["nextCursor"].as_string(), "0");
  json::object first = all["locks"].as_array()[0].as_object();
  EXPECT_TRUE(first.contains("heldBy"));
  EXPECT_FALSE(first.contains("handle"));

  json::object page = cli_json({"list", "--count", "1"}, 0).as_object();
  EXPECT_EQ(page["locks"].as_array().size(), 1u);
  EXPECT_NE(page["nextCursor"].as_string(), "0");
  RunResult more = cli({"list", "--count", "1"});
  EXPECT_NE(more.out.find("more: holdfast locks list --cursor "), std::string::npos) << more.out;

  RunResult none = cli({"list", "--match", "nothing:*"});
  EXPECT_EQ(none.out, "no locks held\n");
}

TEST_F(LocksCli, ReleaseWithTheRightAndAWrongHandle) {
  auto hold = resp.call({"LOCK.TRY", "k", "TTL", "60000"});
  RunResult wrong = cli({"release", "k", "--handle", "WRONGWRONGWRONGWRONGWR"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.out.find("not released: not_holder"), std::string::npos) << wrong.out;
  EXPECT_EQ(cli_json({"release", "k", "--handle", "WRONGWRONGWRONGWRONGWR"}, 1),
            (json::object{{"released", false}, {"reason", "not_holder"}}));
  RunResult ok = cli({"release", "k", "--handle", hold.text("handle")});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "released k\n");
  auto again = resp.call({"LOCK.TRY", "k", "TTL", "60000"});
  EXPECT_EQ(cli_json({"release", "k", "--handle", again.text("handle")}, 0),
            (json::object{{"released", true}}));
}

TEST_F(LocksCli, RenewMovesTheLeaseOrExitsOne) {
  auto hold = resp.call({"LOCK.TRY", "k", "TTL", "1000"});
  RunResult ok = cli({"renew", "k", "--handle", hold.text("handle"), "--ttl", "90000"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("renewed k, expires in ", 0), 0u) << ok.out;
  EXPECT_TRUE(expires_in_about(ok.out.substr(std::string("renewed k, expires ").size()), 90))
      << ok.out;
  json::object r =
      cli_json({"renew", "k", "--handle", hold.text("handle"), "--ttl", "60000"}, 0).as_object();
  EXPECT_EQ(r["renewed"], true);
  EXPECT_EQ(r["leaseExpiresAt"].as_int64(),
            resp.call({"LOCK.STATUS", "k"}).number("leaseExpiresAt"));
  RunResult lost = cli({"renew", "k", "--handle", "WRONGWRONGWRONGWRONGWR", "--ttl", "1000"});
  EXPECT_EQ(lost.exit_code, 1);
  EXPECT_NE(lost.out.find("not renewed: lease_lost"), std::string::npos);
  EXPECT_EQ(cli_json({"renew", "k", "--handle", "WRONGWRONGWRONGWRONGWR", "--ttl", "1000"}, 1),
            (json::object{{"renewed", false}, {"reason", "lease_lost"}}));
}

TEST_F(LocksCli, AssignedHolds) {
  RunResult assigned = cli({"assign", "doc:1", "alice"});
  EXPECT_EQ(assigned.exit_code, 0) << assigned.err;
  EXPECT_EQ(field(assigned.out, "HOLDER"), "alice");
  EXPECT_EQ(field(assigned.out, "EXPIRES"), "never");
  RunResult taken = cli({"assign", "doc:1", "bob"});
  EXPECT_EQ(taken.exit_code, 1) << "LOCK_HELD is contention";
  EXPECT_NE(taken.err.find("LOCK_HELD"), std::string::npos);

  EXPECT_EQ(field(cli({"holder", "doc:1"}).out, "HOLDER"), "alice");
  json::object h = cli_json({"holder", "doc:1"}, 0).as_object();
  EXPECT_EQ(h["holder"].as_string(), "alice");
  EXPECT_EQ(h["held"], true);
  EXPECT_TRUE(h["leaseExpiresAt"].is_null());

  json::object t = cli_json({"transfer", "doc:1", "bob", "--from", "alice"}, 0).as_object();
  EXPECT_EQ(t["holder"].as_string(), "bob");
  RunResult not_holder = cli({"transfer", "doc:1", "carol", "--from", "alice"});
  EXPECT_EQ(not_holder.exit_code, 1);
  EXPECT_EQ(cli({"transfer", "doc:1", "carol", "--from", "bob"}).out,
            "transferred doc:1 from bob to carol (token " +
                std::to_string(t["token"].as_int64() + 1) + ")\n");

  json::object a = cli_json({"assign", "doc:2", "dave", "--ttl", "5000"}, 0).as_object();
  EXPECT_EQ(a["leaseExpiresAt"].as_int64() - a["acquiredAt"].as_int64(), 5000);
  EXPECT_EQ(cli_json({"unassign", "doc:2"}, 0), (json::object{{"released", true}}));
  EXPECT_EQ(cli_json({"unassign", "doc:2"}, 1), (json::object{{"released", false}}));
  EXPECT_EQ(cli({"unassign", "doc:1", "--holder", "carol"}).out, "unassigned doc:1\n");

  // The server's holder check, with the token; open mode needs the holder named.
  json::object mine = cli_json({"assign", "doc:3", "erin"}, 0).as_object();
  json::object checked = cli_json({"check", "doc:3", "erin"}, 0).as_object();
  EXPECT_EQ(checked["token"], mine["token"]);
  EXPECT_EQ(field(cli({"holder", "doc:3"}).out, "TOKEN"), std::to_string(mine["token"].as_int64()));
  RunResult other = cli({"check", "doc:3", "frank"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("not held by frank"), std::string::npos) << other.err;
  EXPECT_EQ(cli({"check", "doc:3"}).exit_code, 2) << "open mode: no holder id of one's own";
  EXPECT_EQ(cli({"transfer", "doc:3", "frank"}).exit_code, 2);
}

TEST_F(LocksCli, UnreachableServerExitsFour) {
  const std::string nowhere = "127.0.0.1:" + std::to_string(free_port());
  RunResult r = run({HOLDFAST_BIN, "locks", "status", "k", "--server", nowhere});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("cannot connect to " + nowhere), std::string::npos) << r.err;
  RunResult j = run({HOLDFAST_BIN, "locks", "acquire", "k", "--json", "--server", nowhere});
  EXPECT_EQ(j.exit_code, 4);
  EXPECT_EQ(json::parse(j.out).as_object()["errorCode"].as_string(), "CONNECTION");
}

TEST_F(LocksCli, UsageErrorsExitTwo) {
  EXPECT_EQ(cli({"status"}).exit_code, 2) << "missing KEY";
  EXPECT_EQ(cli({"release", "k"}).exit_code, 2) << "missing --handle";
  EXPECT_EQ(cli({"renew", "k", "--handle", "h"}).exit_code, 2) << "missing --ttl";
  // Bad numbers are refused before anything is sent, with what is wrong with them.
  const std::string units =
      " (use a whole number of milliseconds, or units ms, s, m, h: 1500ms, 30s, 5m, 2h)";
  const struct {
    std::vector<std::string> args;
    std::string message;
  } numbers[] = {
      {{"acquire", "k", "--ttl", "0"}, "--ttl: \"0\" is below 1ms"},
      {{"acquire", "k", "--ttl", "0s"}, "--ttl: \"0s\" is below 1ms"},
      {{"acquire", "k", "--ttl", "soon"}, "--ttl: \"soon\" is not a duration" + units},
      {{"acquire", "k", "--ttl", "30x"}, "--ttl: \"30x\" is not a duration" + units},
      {{"acquire", "k", "--ttl", "30 s"}, "--ttl: \"30 s\" is not a duration" + units},
      {{"acquire", "k", "--ttl", "1.5"}, "--ttl: \"1.5\" is not a whole number of milliseconds"},
      {{"acquire", "k", "--ttl", "1.5ms"},
       "--ttl: \"1.5ms\" is not a whole number of milliseconds"},
      {{"acquire", "k", "--ttl", "99999999999999999999"},
       "--ttl: \"99999999999999999999\" is too long"},
      {{"acquire", "k", "--wait", "-1"}, "--wait: \"-1\" is negative: a duration is 0 or more"},
      {{"acquire", "k", "--wait", "-5s"}, "--wait: \"-5s\" is negative"},
      {{"acquire", "k", "--lock-delay", "1m30"}, "--lock-delay: \"1m30\" is not a duration"},
      {{"renew", "k", "--handle", "h", "--ttl", "x"}, "--ttl: \"x\" is not a duration" + units},
      {{"assign", "k", "bob", "--wait", "soon"}, "--wait: \"soon\" is not a duration"},
      {{"run", "k", "--ttl", "5min", "--", "true"}, "--ttl: \"5min\" is not a duration"},
      {{"list", "--count", "0"}, "--count: 0 is below 1"},
      {{"list", "--count", "x"}, "--count: 'x' is not a whole number of holds"},
  };
  for (const auto& bad : numbers) {
    RunResult r = cli(bad.args);
    EXPECT_EQ(r.exit_code, 2) << bad.message;
    EXPECT_NE(r.err.find(bad.message), std::string::npos) << r.err;
  }
  EXPECT_EQ(resp.call({"LOCK.STATUS", "k"}).number("held"), 0) << "nothing was taken";
  EXPECT_EQ(cli({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run({HOLDFAST_BIN, "locks"}).exit_code, 2) << "no subcommand";
  EXPECT_EQ(cli({"acquire", "k", "--server", "redis://x"}).exit_code, 2) << "malformed URL";
  RunResult bad_key = cli({"acquire", std::string("bad\x01key")});
  EXPECT_EQ(bad_key.exit_code, 2) << "INVALID_ARGUMENT from the server";
  EXPECT_NE(bad_key.err.find("INVALID_ARGUMENT"), std::string::npos);
}

TEST_F(LocksCli, AuthenticationAndAccessErrorsExitThree) {
  FakeServer strict("-UNAUTHENTICATED unknown credentials\r\n");
  RunResult r =
      run({HOLDFAST_BIN, "locks", "status", "k", "--server", strict.url(), "--token", "nope"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err,
            "holdfast locks: the server refused the token given by --token (no member or "
            "function of its credentials has it)\n");

  const std::string hello = "%1\r\n+server\r\n+holdfast\r\n";
  FakeServer member({hello, "-FORBIDDEN LOCK.LIST needs the admin or owner role\r\n"});
  RunResult list = run({HOLDFAST_BIN, "locks", "list", "--json", "--server", member.url()});
  EXPECT_EQ(list.exit_code, 3);
  EXPECT_EQ(json::parse(list.out).as_object()["errorCode"].as_string(), "FORBIDDEN");

  FakeServer ruled({hello, "-LOCK_ACCESS_DENIED the lock rule set denies acquire key=jobs:1\r\n"});
  EXPECT_EQ(run({HOLDFAST_BIN, "locks", "acquire", "jobs:1", "--server", ruled.url()}).exit_code,
            3);
}

TEST_F(LocksCli, ServerAndTokenFromTheEnvironmentAndUnixSockets) {
  RunResult r = run({HOLDFAST_BIN, "locks", "acquire", "env-key", "--json"}, "",
                    {"HOLDFAST_SERVER=" + server.url(), "HOLDFAST_TOKEN=anything"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  RunResult unix_status =
      run({HOLDFAST_BIN, "locks", "status", "env-key", "--server", "unix://" + server.unix_path()});
  EXPECT_EQ(unix_status.exit_code, 0) << unix_status.err;
  EXPECT_EQ(field(unix_status.out, "HELD"), "yes");
}

TEST_F(LocksCli, CommonOptionsGoBeforeOrAfterTheSubcommand) {
  RunResult before =
      run({HOLDFAST_BIN, "locks", "--json", "--server", server.url(), "status", "k"});
  RunResult after = run({HOLDFAST_BIN, "locks", "status", "k", "--json", "--server", server.url()});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out, after.out);
  EXPECT_EQ(json::parse(before.out).as_object()["key"].as_string(), "k");
}

TEST_F(LocksCli, DurationsTakeUnits) {
  json::object seconds = cli_json({"acquire", "a", "--ttl", "30s"}, 0).as_object();
  EXPECT_EQ(seconds["leaseExpiresAt"].as_int64() - seconds["acquiredAt"].as_int64(), 30'000);
  json::object decimal = cli_json({"acquire", "b", "--ttl", "1.5s"}, 0).as_object();
  EXPECT_EQ(decimal["leaseExpiresAt"].as_int64() - decimal["acquiredAt"].as_int64(), 1500);
  json::object plain = cli_json({"acquire", "c", "--ttl", "2500"}, 0).as_object();
  EXPECT_EQ(plain["leaseExpiresAt"].as_int64() - plain["acquiredAt"].as_int64(), 2500)
      << "a plain number is milliseconds";
  json::object hours =
      cli_json({"acquire", "d", "--ttl", "2h", "--lock-delay", "1.5s"}, 0).as_object();
  EXPECT_EQ(hours["leaseExpiresAt"].as_int64() - hours["acquiredAt"].as_int64(), 7'200'000);
  EXPECT_EQ(hours["lockDelayMs"].as_int64(), 1500);

  json::object renewed =
      cli_json(
          {"renew", "a", "--handle", std::string(seconds["handle"].as_string()), "--ttl", "5m"}, 0)
          .as_object();
  EXPECT_GE(renewed["leaseExpiresAt"].as_int64() - seconds["acquiredAt"].as_int64(), 300'000)
      << "renewed for 5 minutes from a moment after the grant";

  json::object assigned = cli_json({"assign", "doc", "alice", "--ttl", "1m"}, 0).as_object();
  EXPECT_EQ(assigned["leaseExpiresAt"].as_int64() - assigned["acquiredAt"].as_int64(), 60'000);
  RunResult timed_out = cli({"acquire", "d", "--wait", "0.1s"});
  EXPECT_EQ(timed_out.exit_code, 1);
  EXPECT_NE(timed_out.out.find("no grant within 100ms"), std::string::npos) << timed_out.out;
}

TEST_F(LocksCli, TheHttpPortIsNamedAsSuch) {
  const std::string http = "127.0.0.1:" + std::to_string(server.http_port());
  RunResult r = run({HOLDFAST_BIN, "locks", "status", "k", "--server", http});
  EXPECT_EQ(r.exit_code, 4) << "unreachable: no RESP server there";
  EXPECT_EQ(r.err, "holdfast locks: " + http +
                       " answered with HTTP, not RESP: --server takes the RESP port (7420 by "
                       "default)\n");
  RunResult j = run({HOLDFAST_BIN, "locks", "status", "k", "--json", "--server", http});
  EXPECT_EQ(j.exit_code, 4);
  json::object e = json::parse(j.out).as_object();
  EXPECT_EQ(e["errorCode"].as_string(), "PROTOCOL");
  EXPECT_EQ(e["details"].as_object()["protocol"].as_string(), "http");
}

TEST_F(LocksCli, APeerThatDoesNotSpeakRespIsNamedAsSuch) {
  FakeServer ssh("SSH-2.0-OpenSSH_9.2\r\n");
  const std::string where = "127.0.0.1:" + std::to_string(ssh.port());
  RunResult r = run({HOLDFAST_BIN, "locks", "status", "k", "--server", where});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err.rfind("holdfast locks: " + where + " did not answer in RESP (", 0), 0u) << r.err;
}

TEST_F(LocksCli, ATokenInOpenModeIsWarnedAbout) {
  RunResult flag = cli({"status", "k", "--token", "whatever"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  const std::string where = server.url().substr(std::string("holdfast://").size());
  EXPECT_EQ(flag.err, "holdfast locks: warning: " + where +
                          " is in local open mode and does not check tokens; the token given "
                          "by --token was not checked\n");
  RunResult env = run({HOLDFAST_BIN, "locks", "status", "k", "--json", "--server", server.url()},
                      "", {"HOLDFAST_TOKEN=whatever"});
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.err.find("the token given by HOLDFAST_TOKEN was not checked"), std::string::npos)
      << env.err;
  EXPECT_EQ(json::parse(env.out).as_object()["key"].as_string(), "k")
      << "stdout keeps only the JSON";
  RunResult none = cli({"status", "k"});
  EXPECT_EQ(none.err, "") << "no token, nothing to warn about";
}

TEST_F(LocksCli, AWaitSaysOnceOnStderrWhoHoldsTheKey) {
  // acquire --wait and assign --wait say it the same way; then each prints what it took.
  const struct {
    std::string key, owner;
    std::vector<std::string> args;
    std::string field, value;  // of the JSON printed once the key is taken
  } waits[] = {
      {"k", "run-17", {"acquire", "k"}, "key", "k"},
      {"doc", "run-18", {"assign", "doc", "bob"}, "holder", "bob"},
  };
  for (const auto& w : waits) {
    SCOPED_TRACE(w.args.front());
    RespValue hold = resp.call({"LOCK.TRY", w.key, "TTL", "60000", "OWNER", w.owner});
    std::vector<std::string> argv = {HOLDFAST_BIN, "locks"};
    argv.insert(argv.end(), w.args.begin(), w.args.end());
    argv.insert(argv.end(), {"--wait", "1m", "--json", "--server", server.url()});
    Child waiting = Child::start(argv, true);  // stderr and stdout in one pipe, in order
    std::string line;
    ASSERT_TRUE(waiting.read_line(&line));
    EXPECT_EQ(line.rfind("holdfast locks: waiting up to 1m: " + w.key +
                             " is held by user:local (owner " + w.owner + "), expires in ",
                         0),
              0u)
        << line;
    ASSERT_TRUE(await_waiters(resp, w.key, 1));
    EXPECT_EQ(resp.call({"LOCK.RELEASE", w.key, hold.text("handle")}).number("released"), 1);
    ASSERT_TRUE(waiting.read_line(&line));
    EXPECT_EQ(json::parse(line).as_object()[w.field].as_string(), w.value) << line;
    EXPECT_FALSE(waiting.read_line(&line)) << "said once: " << line;
    EXPECT_EQ(waiting.wait(), 0);
  }

  RunResult free = cli({"acquire", "free", "--wait", "1m"});
  EXPECT_EQ(free.exit_code, 0) << free.err;
  EXPECT_EQ(free.err, "") << "a free key needs no wait, and no word about one";
}

TEST_F(LocksCli, AWaitForSeveralKeysNamesEach) {
  resp.call({"LOCK.TRY", "b", "TTL", "60000", "OWNER", "job-3"});
  Child waiting = Child::start({HOLDFAST_BIN, "locks", "acquire", "a", "--key", "b", "--wait",
                                "30s", "--server", server.url()},
                               true);
  std::string line;
  ASSERT_TRUE(waiting.read_line(&line));
  EXPECT_EQ(line.rfind("holdfast locks: waiting up to 30s: a is free now; b is held by user:local "
                       "(owner job-3), expires in ",
                       0),
            0u)
      << line;
  waiting.signal(SIGTERM);
  waiting.wait();
}

TEST_F(LocksCli, HelpDocumentsTheExitCodes) {
  RunResult r = run({HOLDFAST_BIN, "locks", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s :
       {"0 done", "1 not acquired", "2 usage error", "3 authentication or access error",
        "4 server unreachable", "milliseconds since the Unix epoch"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_NE(run({HOLDFAST_BIN, "locks", "acquire", "--help"}).out.find("4 server unreachable"),
            std::string::npos);
}

}  // namespace
}  // namespace holdfast::testing
