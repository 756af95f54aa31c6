"""Logs stay bounded under a flood of refusals: one client hammering /v1/networks past its
rate limit (the shipped 20 r/s, burst 40) gets tens of thousands of 429s in 3 s. Before, each
was an error-log line and an access-log line (26 MB and 25 MB in 3 s, about 750 GB a day); now
the error log gets none of them (limit_req_log_level info, below its warn) and the access log
one in 256 ($connector_log_request), while every answer that is not a refusal is still logged.
Bounds: the error log grows by less than 16 KiB, the access log by less than 256 KiB."""

import re
import subprocess
import unittest

from fixture import Fixture
from harness import Stack

fixture = Fixture()


class Flood(unittest.TestCase):
    def test_a_flood_of_429s_leaves_the_logs_small(self):
        with Stack(fixture=fixture.path, nginx_env={"NGINX_CONNECTOR_RATE": "20r/s"}) as stack:
            access = stack.nginx_prefix / "access.log"
            error = stack.nginx_prefix / "error.log"
            before = (access.stat().st_size, error.stat().st_size)
            out = subprocess.run(["wrk", "-t1", "-c8", "-d3s",
                                  f"http://127.0.0.1:{stack.port}/v1/networks"],
                                 capture_output=True, text=True, timeout=60).stdout
            total = int(re.search(r"(\d+) requests in", out).group(1))
            refused = int(re.search(r"Non-2xx or 3xx responses: (\d+)", out).group(1))
            self.assertGreater(refused, 1000, out)
            access_grew = access.stat().st_size - before[0]
            error_grew = error.stat().st_size - before[1]
            self.assertLess(error_grew, 16 * 1024, stack.nginx_error_log_text()[-2000:])
            self.assertLess(access_grew, 256 * 1024)
            lines = access.read_text().splitlines()
            # Every answer that is not a refusal is there (the burst's 200s at least), and
            # about one refusal in 256.
            answered = [line for line in lines if '"GET /v1/networks HTTP/1.1" 200 ' in line]
            sampled = [line for line in lines if '"GET /v1/networks HTTP/1.1" 429 ' in line]
            # wrk counts the answers it read; nginx also logs the few it sent as wrk stopped
            # (at most one per connection).
            self.assertGreaterEqual(len(answered), total - refused)
            self.assertLessEqual(len(answered), total - refused + 8)
            self.assertLess(len(sampled), refused / 256 * 2 + 20)
            self.assertTrue(all(re.search(r"request_id=[0-9a-f]*00 ", line) for line in sampled))


if __name__ == "__main__":
    unittest.main()
