"""redis-py (Debian's python3-redis) over TLS, configured as its documentation shows:
redis.Redis(ssl=True, ssl_ca_certs=...), and ssl_certfile/ssl_keyfile for a client
certificate. Plain commands, the Holdfast lock commands and redis-py's Lock work over it; a
client certificate whose common name the credentials carry (certCommonName) is that caller
without AUTH, an unknown one is not signed in, and a server whose CA is not trusted, or a
plaintext client, are refused."""
import unittest

import redis
from redis.exceptions import AuthenticationError, ConnectionError as RedisConnectionError

from holdfast_server import HoldfastServer, reply_map

open_server = None
auth_server = None


def setUpModule():
    global open_server, auth_server
    open_server = HoldfastServer(tls=True)
    auth_server = HoldfastServer(auth=True, tls=True)


def tearDownModule():
    open_server.stop()
    auth_server.stop()


def connect(server, **options):
    return redis.Redis(host="127.0.0.1", port=server.port, ssl=True,
                       ssl_ca_certs=server.tls["ca"], ssl_cert_reqs="required", **options)


class RedisPyOverTls(unittest.TestCase):
    def test_commands_and_the_lock_commands(self):
        r = connect(open_server)
        self.assertTrue(r.ping())
        hold = reply_map(r.execute_command("LOCK.TRY", "py:tls", "TTL", 30000))
        self.assertEqual(hold["heldBy"], "user:local")
        self.assertEqual(len(hold["handle"]), 26)
        released = reply_map(r.execute_command("LOCK.RELEASE", "py:tls", hold["handle"]))
        self.assertEqual(released["released"], 1)
        # The Redis idiom, as Redis lock code sends it.
        self.assertTrue(r.set("py:idiom", "token-1", nx=True, px=30000))
        self.assertIsNone(r.set("py:idiom", "token-2", nx=True, px=30000))
        self.assertEqual(r.get("py:idiom"), b"token-1")
        self.assertEqual(r.delete("py:idiom"), 1)

    def test_the_lock_of_redis_py(self):
        r = connect(open_server)
        lock = r.lock("py:tls-lock", timeout=5, blocking_timeout=1)
        self.assertTrue(lock.acquire())
        self.assertTrue(lock.owned())
        other = connect(open_server).lock("py:tls-lock", timeout=5, blocking_timeout=0.2)
        self.assertFalse(other.acquire())
        self.assertTrue(lock.extend(10))
        lock.release()
        self.assertFalse(lock.locked())
        self.assertTrue(other.acquire())
        other.release()

    def test_a_client_certificate_is_its_caller(self):
        carol = connect(auth_server, ssl_certfile=auth_server.tls["cert"],
                        ssl_keyfile=auth_server.tls["key"])
        hold = reply_map(carol.execute_command("LOCK.TRY", "py:carol", "TTL", 30000))
        self.assertEqual(hold["heldBy"], "user:carol")
        lock = carol.lock("py:carol-lock", timeout=5, blocking_timeout=1)
        self.assertTrue(lock.acquire())
        status = reply_map(carol.execute_command("LOCK.STATUS", "py:carol-lock"))
        self.assertEqual(status["heldBy"], "user:carol")
        lock.release()

    def test_without_a_certificate_a_token_is_needed(self):
        anonymous = connect(auth_server)
        # redis-py raises its AuthenticationError for the server's NOAUTH.
        with self.assertRaises(AuthenticationError) as refused:
            anonymous.execute_command("LOCK.TRY", "py:anon", "TTL", 30000)
        self.assertIn("send AUTH", str(refused.exception))
        alice = connect(auth_server, password="alice-secret")
        hold = reply_map(alice.execute_command("LOCK.TRY", "py:alice", "TTL", 30000))
        self.assertEqual(hold["heldBy"], "user:alice")

    def test_an_untrusted_server_and_a_plaintext_client_are_refused(self):
        untrusted = redis.Redis(host="127.0.0.1", port=open_server.port, ssl=True,
                                ssl_ca_certs=open_server.tls["otherCa"], ssl_cert_reqs="required")
        with self.assertRaises(RedisConnectionError) as refused:
            untrusted.ping()
        self.assertIn("certificate verify failed", str(refused.exception))
        plain = redis.Redis(host="127.0.0.1", port=open_server.port, socket_timeout=10)
        with self.assertRaises(RedisConnectionError):
            plain.ping()


if __name__ == "__main__":
    unittest.main()
