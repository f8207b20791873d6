"""redis-py, as Debian packages it, is a Holdfast client with its default settings: the
connection, its options (client_name, a redis://.../0 URL, passwords, a Unix socket), pipelines
without a transaction, r.command(), INFO, its error classes and reconnecting after a restart.
Transactions (MULTI/EXEC) are in test_redis_py_transactions.py."""
import unittest

import redis
from redis.exceptions import AuthenticationError, ConnectionError, ResponseError

from holdfast_server import HoldfastServer, reply_map

server = None


def setUpModule():
    global server
    server = HoldfastServer()


def tearDownModule():
    server.stop()


def client(**options):
    return redis.Redis(host="127.0.0.1", port=server.port, **options)


def try_lock(r, key, ttl=60000):
    reply = r.execute_command("LOCK.TRY", key, "TTL", ttl)
    return None if reply is None else reply_map(reply)


class DefaultConnection(unittest.TestCase):
    def test_ping_and_a_lock_round_trip(self):
        r = client()
        self.assertTrue(r.ping())
        hold = try_lock(r, "py:default")
        self.assertEqual(hold["heldBy"], "user:local")
        self.assertIsNone(try_lock(r, "py:default"), "a held key answers nil")
        released = reply_map(r.execute_command("LOCK.RELEASE", "py:default", hold["handle"]))
        self.assertEqual(released["released"], 1)

    def test_echo_time_select_dbsize(self):
        r = client()
        self.assertEqual(r.echo("marker"), b"marker")
        seconds, micros = r.time()
        self.assertGreater(seconds, 1_700_000_000)
        self.assertLess(micros, 1_000_000)
        self.assertTrue(r.execute_command("SELECT", 0))
        before = r.dbsize()
        try_lock(r, "py:dbsize")
        self.assertEqual(r.dbsize(), before + 1)

    def test_info_has_the_fields_clients_read(self):
        r = client()
        try_lock(r, "py:info")
        info = r.info()
        self.assertEqual(info["loading"], 0)
        self.assertEqual(info["redis_mode"], "standalone")
        self.assertTrue(str(info["redis_version"]).startswith("7."))
        self.assertGreaterEqual(info["connected_clients"], 1)
        self.assertGreater(info["total_commands_processed"], 0)
        self.assertGreaterEqual(info["db0"]["keys"], 1)
        holdfast = r.info("holdfast")
        self.assertEqual(holdfast["holds"], r.dbsize())
        self.assertEqual(holdfast["node_mode"], "embedded" if server.store == "embedded" else "scale-out")
        self.assertNotIn("loading", holdfast, "INFO <section> answers that section only")

    def test_lock_errors_are_response_errors_with_the_code_first(self):
        r = client()
        try_lock(r, "py:busy")
        with self.assertRaises(ResponseError) as timeout:
            r.execute_command("LOCK.ACQUIRE", "py:busy", "TTL", 1000, "TIMEOUT", 50)
        self.assertTrue(str(timeout.exception).startswith("LOCK_TIMEOUT"), str(timeout.exception))
        self.assertIn("key=py:busy", str(timeout.exception))
        with self.assertRaises(ResponseError) as invalid:
            r.execute_command("LOCK.TRY", "py:x", "TTL", 0)
        self.assertTrue(str(invalid.exception).startswith("INVALID_ARGUMENT"), str(invalid.exception))


class ConnectionOptions(unittest.TestCase):
    def test_client_name_is_set_and_listed(self):
        r = client(client_name="py-worker-1")
        self.assertEqual(r.client_getname(), "py-worker-1")
        mine = [c for c in r.client_list() if c["name"] == "py-worker-1"]
        self.assertEqual(len(mine), 1, r.client_list())
        self.assertEqual(int(mine[0]["id"]), r.client_id())
        self.assertEqual(mine[0]["db"], "0")

    def test_a_url_with_database_zero_connects_and_another_database_is_refused(self):
        r = redis.Redis.from_url(f"redis://127.0.0.1:{server.port}/0")
        self.assertTrue(r.ping())
        self.assertEqual(try_lock(r, "py:url")["key"], "py:url")
        with self.assertRaises(ResponseError) as other:
            redis.Redis.from_url(f"redis://127.0.0.1:{server.port}/1").ping()
        self.assertIn("DB index is out of range", str(other.exception))

    def test_unix_socket(self):
        r = redis.Redis(unix_socket_path=server.unix_path)
        self.assertTrue(r.ping())
        self.assertEqual(try_lock(r, "py:unix")["key"], "py:unix")
        me = r.client_info()
        self.assertTrue(me["addr"].endswith(":0"), me)
        self.assertGreater(me["qbuf-free"], 0)

    def test_pipeline_without_transaction(self):
        r = client()
        p = r.pipeline(transaction=False)
        p.execute_command("LOCK.TRY", "py:pipe", "TTL", 60000)
        p.execute_command("LOCK.STATUS", "py:pipe")
        p.ping()
        hold, status, pong = p.execute()
        self.assertEqual(reply_map(hold)["key"], "py:pipe")
        self.assertEqual(reply_map(status)["held"], 1)
        self.assertTrue(pong)

    def test_command_describes_every_command(self):
        r = client()
        commands = r.command()
        self.assertEqual(len(commands), r.command_count())
        self.assertEqual(commands["lock.try"]["arity"], -4)
        self.assertIn("write", commands["lock.try"]["flags"])
        self.assertEqual(commands["lock.try"]["first_key_pos"], 1)
        self.assertIn("no_auth", commands["auth"]["flags"])
        subcommands = [s[0] for s in commands["client"]["subcommands"]]
        self.assertIn(b"client|setname", subcommands)


class Reconnect(unittest.TestCase):
    def test_the_pool_reconnects_after_a_server_restart(self):
        r = client()
        hold = try_lock(r, "py:restart")
        server.restart()
        # The pooled connection is dead; redis-py notices it and connects again.
        status = reply_map(r.execute_command("LOCK.STATUS", "py:restart"))
        self.assertEqual(status["held"], 1, "a lease-scoped hold survives the restart")
        self.assertEqual(status["token"], hold["token"])


class Credentials(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = HoldfastServer(auth=True)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def connect(self, **options):
        return redis.Redis(host="127.0.0.1", port=self.server.port, **options)

    def test_password_only(self):
        self.assertEqual(try_lock(self.connect(password="alice-secret"), "user:alice:1")["heldBy"], "user:alice")

    def test_user_and_password(self):
        self.assertEqual(try_lock(self.connect(username="bob", password="bob-secret"), "k:bob")["heldBy"], "user:bob")

    def test_user_default_means_no_user_name(self):
        r = self.connect(username="default", password="alice-secret")
        self.assertEqual(try_lock(r, "k:default")["heldBy"], "user:alice")

    def test_a_wrong_password_is_refused_with_wrongpass(self):
        # redis-py raises AuthenticationError for WRONGPASS from 4.4 on; the 4.3 that Debian 12
        # ships knows no WRONGPASS and raises ResponseError with the whole line, as it does
        # with Redis itself.
        knows_wrongpass = "WRONGPASS" in redis.connection.BaseParser.EXCEPTION_CLASSES
        for options in ({"password": "nope"}, {"username": "bob", "password": "alice-secret"}):
            with self.assertRaises(ResponseError if not knows_wrongpass else AuthenticationError) as refused:
                self.connect(**options).ping()
            if not knows_wrongpass:
                self.assertTrue(str(refused.exception).startswith("WRONGPASS"), str(refused.exception))

    def test_a_command_before_auth_is_an_authentication_error(self):
        r = self.connect()
        self.assertTrue(r.ping(), "PING needs no authentication")
        with self.assertRaises(AuthenticationError) as required:
            r.execute_command("LOCK.STATUS", "k")
        self.assertIn("Authentication required", str(required.exception))
        self.assertIsInstance(required.exception, ConnectionError)  # how redis-py files it


if __name__ == "__main__":
    unittest.main()
