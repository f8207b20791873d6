"""redis-py's Lock (Debian's python3-redis), used as its documentation shows with only the
address changed: r.lock(name, timeout=, blocking_timeout=), acquire, extend, reacquire,
locked, owned, release, and LockNotOwnedError once the lease lapsed. Two workers contend on one
key and read the grant's fencing token with LOCK.STATUS inside the critical section; a grant
acknowledged before a kill -9 is still held after the restart."""
import threading
import time
import unittest

import redis
from redis.exceptions import LockError, LockNotOwnedError

from holdfast_server import HoldfastServer, reply_map

server = None


def setUpModule():
    global server
    server = HoldfastServer()


def tearDownModule():
    server.stop()


def connect():
    return redis.Redis(host="127.0.0.1", port=server.port, retry_on_timeout=True)


class RedisPyLock(unittest.TestCase):
    def setUp(self):
        self.r = connect()

    def status(self, key):
        return reply_map(self.r.execute_command("LOCK.STATUS", key))

    def test_acquire_extend_reacquire_release(self):
        lock = self.r.lock("py:a", timeout=5, blocking_timeout=1)
        self.assertTrue(lock.acquire())
        self.assertTrue(lock.locked())
        self.assertTrue(lock.owned())
        st = self.status("py:a")
        self.assertEqual(st["held"], 1)
        self.assertEqual(st["owner"], lock.local.token.decode())
        self.assertGreater(st["token"], 0)
        # Another client's lock on the same name waits, then gives up.
        other = connect().lock("py:a", timeout=5, blocking_timeout=0.2)
        self.assertFalse(other.acquire())
        self.assertFalse(other.owned())
        self.assertTrue(lock.extend(10))
        self.assertGreater(self.r.pttl("py:a"), 10000)
        self.assertTrue(lock.extend(3, replace_ttl=True))
        self.assertLessEqual(self.r.pttl("py:a"), 3000)
        self.assertTrue(lock.reacquire())
        self.assertGreater(self.r.pttl("py:a"), 3000)
        lock.release()
        self.assertFalse(lock.locked())
        self.assertEqual(self.status("py:a")["held"], 0)
        self.assertTrue(other.acquire())
        other.release()

    def test_the_context_manager_form(self):
        with self.r.lock("py:ctx", timeout=5) as lock:
            self.assertTrue(lock.owned())
            self.assertEqual(self.status("py:ctx")["held"], 1)
        self.assertEqual(self.status("py:ctx")["held"], 0)

    def test_a_lapsed_lease_is_not_owned_and_release_says_so(self):
        lock = self.r.lock("py:lapse", timeout=0.2)
        self.assertTrue(lock.acquire(blocking=False))
        deadline = time.monotonic() + 10
        while lock.locked() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(lock.owned())
        with self.assertRaises(LockNotOwnedError):
            lock.release()
        with self.assertRaises(LockError):
            lock.extend(1)

    def test_two_workers_never_overlap(self):
        rounds = 25
        state = {"inside": 0, "last_token": 0, "entered": 0, "errors": []}
        guard = threading.Lock()

        def worker():
            r = connect()
            try:
                for _ in range(rounds):
                    with r.lock("py:contended", timeout=5, sleep=0.005, blocking_timeout=30):
                        with guard:
                            state["inside"] += 1
                            overlapping = state["inside"] > 1
                        token = reply_map(r.execute_command("LOCK.STATUS", "py:contended"))["token"]
                        with guard:
                            if overlapping:
                                state["errors"].append("two critical sections overlap")
                            if token <= state["last_token"]:
                                state["errors"].append(f"token {token} <= {state['last_token']}")
                            state["last_token"] = token
                        time.sleep(0.001)
                        with guard:
                            state["inside"] -= 1
                            state["entered"] += 1
            except Exception as e:  # reported below, in the test's thread
                state["errors"].append(repr(e))

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertEqual(state["errors"], [])
        self.assertEqual(state["entered"], 2 * rounds)
        self.assertEqual(self.status("py:contended")["held"], 0)

    def test_an_acknowledged_grant_survives_a_kill_9(self):
        lock = self.r.lock("py:crash", timeout=60)
        self.assertTrue(lock.acquire(blocking=False))
        before = self.status("py:crash")
        server.kill9()
        after = reply_map(connect().execute_command("LOCK.STATUS", "py:crash"))
        self.assertEqual(after["held"], 1)
        self.assertEqual(after["token"], before["token"])
        self.assertEqual(after["owner"], lock.local.token.decode())
        self.assertFalse(connect().lock("py:crash", timeout=1).acquire(blocking=False))
        lock.redis = connect()
        lock.release()
        self.assertEqual(reply_map(connect().execute_command("LOCK.STATUS", "py:crash"))["held"], 0)


if __name__ == "__main__":
    unittest.main()
