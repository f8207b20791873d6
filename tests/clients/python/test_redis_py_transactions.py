"""redis-py transactions: the default r.pipeline() wraps its commands in MULTI/EXEC.
These fail until the server has MULTI/EXEC/DISCARD."""
import unittest

import redis
from redis.exceptions import ResponseError

from holdfast_server import HoldfastServer, reply_map

server = None


def setUpModule():
    global server
    server = HoldfastServer()


def tearDownModule():
    server.stop()


class Transactions(unittest.TestCase):
    def setUp(self):
        self.r = redis.Redis(host="127.0.0.1", port=server.port)

    def test_default_pipeline_runs_its_commands_in_a_transaction(self):
        p = self.r.pipeline()
        p.execute_command("LOCK.TRY", "tx:a", "TTL", 60000)
        p.execute_command("LOCK.TRY", "tx:b", "TTL", 60000)
        p.execute_command("LOCK.STATUS", "tx:a")
        a, b, status = p.execute()
        self.assertEqual(reply_map(a)["key"], "tx:a")
        self.assertEqual(reply_map(b)["key"], "tx:b")
        self.assertEqual(reply_map(status)["held"], 1)
        released = self.r.execute_command("LOCK.RELEASE", "tx:a", reply_map(a)["handle"])
        self.assertEqual(reply_map(released)["released"], 1, "the handle came back to the caller")

    def test_a_command_refused_while_queuing_aborts_and_takes_nothing(self):
        p = self.r.pipeline()
        p.execute_command("LOCK.TRY", "tx:aborted", "TTL", 60000)
        p.execute_command("LOCK.RELEASE", "tx:aborted")  # wrong number of arguments
        with self.assertRaises(ResponseError):
            p.execute()
        status = reply_map(self.r.execute_command("LOCK.STATUS", "tx:aborted"))
        self.assertEqual(status["held"], 0, "nothing ran: no hold without a handle")


if __name__ == "__main__":
    unittest.main()
