"""Write limits of /v1/account (each new recipient is a permanent row the chain watchers follow).

nginx: every limit is keyed on the client's IPv4 address or IPv6 /64 ($connector_client in
nginx/connector-http.conf), and /v1/account has its own zone on top of the general one. The
stack's nginx takes the client address from X-Forwarded-For (realip, as behind a balancer), so
the tests pose as IPv4 and IPv6 clients; both zones' rates are lowered to one request a minute, so
that the shipped bursts are exact. The worker: new_accounts_per_minute = 3, shared by its two
processes; past it a request that needs a new row is a 503 with Retry-After, while a recipient
already recorded is still answered; /metrics counts both."""

import re
import time
import unittest
from urllib.parse import urlencode

from fixture import Fixture
from harness import REPO, Stack, await_true

fixture = Fixture()
CAP = 3
stack = None  # the current class's


class StackPerClass(unittest.TestCase):
    stack_options = {}

    @classmethod
    def setUpClass(cls):
        global stack
        stack = Stack(fixture=fixture.path, **cls.stack_options)

    @classmethod
    def tearDownClass(cls):
        stack.stop()


def shipped_burst(zone, file):
    return int(re.search(rf"limit_req zone={zone} burst=(\d+) nodelay;",
                         (REPO / "nginx" / file).read_text()).group(1))


def account(recipient, client):
    """A deposit address on unitcore for a unitiot recipient (any case there), asked by client."""
    query = urlencode({"recipient_address": recipient, "recipient_blockchain": "unitiot",
                       "deposit_blockchain": "unitcore"})
    return stack.get("/v1/account?" + query, {"X-Forwarded-For": client})


def rows():
    return int(stack.sql("SELECT COUNT(*) FROM deposit_accounts")[0][0])


def metric(name):
    text = stack.get("/metrics").body.decode()
    return int(re.search(rf"^{name} (\d+)$", text, re.M).group(1))


class NginxLimits(StackPerClass):
    stack_options = {"nginx_env": {"NGINX_CONNECTOR_RATE": "1r/m",
                                   "NGINX_CONNECTOR_ACCOUNT_RATE": "1r/m",
                                   "NGINX_CONNECTOR_REAL_IP": "on"}}

    def assert_rate_limited(self, r):
        self.assertEqual((r.status, r.headers["Retry-After"]), (429, "1"))
        self.assertEqual(r.json()["error"]["code"], "rate_limited")

    def test_account_zone_keys_on_the_ipv6_slash_64(self):
        burst = shipped_burst("connector_account", "connector-v1.conf")
        self.assertEqual(burst, 5)
        recipient = "0x" + "a1" * 20  # one recipient: one row, the worker's cap is not in play
        # Every address of one /64 is one client: burst + 1 answers, then 429s.
        answers = [account(recipient, f"2001:db8:aa:1::{i:x}") for i in range(1, burst + 2)]
        self.assertEqual([r.status for r in answers], [200] * (burst + 1))
        self.assert_rate_limited(account(recipient, "2001:db8:aa:1:ffff:ffff:ffff:ffff"))
        self.assert_rate_limited(account(recipient, "2001:db8:aa:1::1"))
        # The next /64 is another client; so is an IPv4 address.
        self.assertEqual(account(recipient, "2001:db8:aa:2::1").status, 200)
        self.assertEqual(account(recipient, "2001:db8:aa::1").status, 200)
        self.assertEqual(account(recipient, "198.51.100.1").status, 200)

    def test_account_zone_keys_on_the_ipv4_address_mapped_or_not(self):
        burst = shipped_burst("connector_account", "connector-v1.conf")
        recipient = "0x" + "a2" * 20
        answers = [account(recipient, "203.0.113.7") for _ in range(burst + 1)]
        self.assertEqual([r.status for r in answers], [200] * (burst + 1))
        self.assert_rate_limited(account(recipient, "203.0.113.7"))
        self.assert_rate_limited(account(recipient, "::ffff:203.0.113.7"))  # the same client
        self.assertEqual(account(recipient, "203.0.113.8").status, 200)

    def test_the_account_zone_leaves_reads_alone(self):
        recipient = "0x" + "a3" * 20
        burst = shipped_burst("connector_account", "connector-v1.conf")
        for _ in range(burst + 1):
            account(recipient, "2001:db8:cc:1::1")
        self.assert_rate_limited(account(recipient, "2001:db8:cc:1::1"))
        r = stack.get("/v1/networks", {"X-Forwarded-For": "2001:db8:cc:1::1"})
        self.assertEqual(r.status, 200)

    def test_general_zone_keys_on_the_ipv6_slash_64_too(self):
        burst = shipped_burst("connector_per_client", "connector-v1.conf")
        answers = [stack.get("/v1/networks", {"X-Forwarded-For": f"2001:db8:bb:1::{i:x}"})
                   for i in range(1, burst + 2)]
        self.assertEqual([r.status for r in answers], [200] * (burst + 1))
        r = stack.get("/v1/networks", {"X-Forwarded-For": "2001:db8:bb:1:1:2:3:4"})
        self.assert_rate_limited(r)
        r = stack.get("/v1/networks", {"X-Forwarded-For": "2001:db8:bb:2::1"})
        self.assertEqual(r.status, 200)


def second_of_minute():
    return int(time.monotonic()) % 60


class WorkerCap(StackPerClass):
    # Two processes: the cap holds for both together. nginx's per-client limits as shipped,
    # each request from a client of its own (realip: X-Forwarded-For), so only the cap refuses.
    stack_options = {"config": {"new_accounts_per_minute": CAP, "processes": 2},
                     "nginx_env": {"NGINX_CONNECTOR_REAL_IP": "on"}}

    def test_new_rows_past_the_cap_are_503_and_recorded_ones_still_answer(self):
        # All in one minute of the window's clock, CLOCK_MONOTONIC (db/new_row_budget.h),
        # which time.monotonic() reads: start early enough in it.
        await_true(lambda: second_of_minute() < 45, 62, what="early in a minute of the clock")
        before_rows = rows()
        created, refused = (metric("connector_deposit_accounts_created_total"),
                            metric("connector_deposit_accounts_refused_total"))
        known = "0x" + "b0" * 20
        self.assertEqual(account(known, "192.0.2.100").status, 200)
        answers = [account("0x" + f"{i:02x}" * 20, f"192.0.2.{i}") for i in range(1, CAP + 3)]
        self.assertEqual([r.status for r in answers], [200] * (CAP - 1) + [503] * 3)
        for r in answers[CAP - 1:]:
            self.assertEqual(r.headers["Cache-Control"], "no-store")
            retry_after = int(r.headers["Retry-After"])
            self.assertTrue(1 <= retry_after <= 60, retry_after)
            self.assertLessEqual(abs(retry_after - (60 - second_of_minute())), 2)
            error = r.json()["error"]
            self.assertEqual(error["code"], "unavailable")
            self.assertEqual(error["message"], "Too many new deposit addresses were asked for in "
                             "the last minute; retry after the time in Retry-After")
            self.assertNotIn("deposit_address", r.json())
        # A recipient already recorded is answered, the cap notwithstanding.
        again = account(known, "192.0.2.101")
        self.assertEqual(again.status, 200)
        self.assertEqual(rows(), before_rows + CAP)
        self.assertEqual(metric("connector_deposit_accounts_created_total"), created + CAP)
        self.assertEqual(metric("connector_deposit_accounts_refused_total"), refused + 3)
        # (The next minute's new budget: tests/unit/test_new_row_budget.cpp.)


if __name__ == "__main__":
    unittest.main()
