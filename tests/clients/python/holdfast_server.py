"""A Holdfast server for a test: started through the serve_for_clients helper, whose path is
in HOLDFAST_SERVE_FOR_CLIENTS (ctest sets it). With HOLDFAST_TEST_STORE_URL set, the server is a
node over PostgreSQL."""
import json
import os
import subprocess


class HoldfastServer:
    def __init__(self, auth=False, tls=False):
        argv = [os.environ["HOLDFAST_SERVE_FOR_CLIENTS"]]
        argv += (["--auth"] if auth else []) + (["--tls"] if tls else [])
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("serve_for_clients did not start a server")
        info = json.loads(line)
        self.port = info["port"]
        self.unix_path = info["unix"]
        self.store = info["store"]
        # With tls: PEM files {"ca", "cert", "key", "otherCa"} (cert: carol.example's).
        self.tls = info.get("tls")

    def restart(self):
        """Stops the server and starts it again on the same port and data."""
        self._proc.stdin.write("restart\n")
        self._proc.stdin.flush()
        if self._proc.stdout.readline().strip() != "restarted":
            raise RuntimeError("the server did not restart")

    def kill9(self):
        """Kills the server with SIGKILL and starts it again on the same port and data."""
        self._proc.stdin.write("kill9\n")
        self._proc.stdin.flush()
        if self._proc.stdout.readline().strip() != "restarted":
            raise RuntimeError("the server did not restart")

    def stop(self):
        self._proc.stdin.close()
        self._proc.wait(timeout=30)


def reply_map(reply):
    """A RESP2 flat [name, value, ...] reply as a dict with str keys and values."""
    def text(v):
        return v.decode() if isinstance(v, bytes) else v
    return {text(reply[i]): text(reply[i + 1]) for i in range(0, len(reply), 2)}
