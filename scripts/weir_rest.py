"""Helpers the benchmark scripts share: calls to Weir's (Flink's) REST API."""
import json
import sys
import time
import urllib.request


class Rest:
    """The REST API of a JobManager on 127.0.0.1:`port`."""

    def __init__(self, port):
        self.api = f"http://127.0.0.1:{port}"

    def get(self, path):
        """GET `path` as JSON."""
        with urllib.request.urlopen(self.api + path, timeout=10) as r:
            return json.load(r)

    def submit(self, body):
        """POST /jobs with `body`; the job id."""
        req = urllib.request.Request(self.api + "/jobs", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)["jobid"]

    def wait_slots(self, n):
        """Waits until the cluster has `n` slots."""
        return wait(lambda: self.get("/overview")["slots-total"] == n)


def wait(cond, timeout=120, poll=0.01):
    """Polls `cond` until it returns a true value (returned); exits after `timeout` s."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = cond()
            if v:
                return v
        except Exception:
            pass
        time.sleep(poll)
    sys.exit("timed out")
