"""/v1/account through nginx: the derived deposit address, the checksum rule on main-chain
recipients, validation, idempotent recording, and 503 (no address) when it cannot be recorded."""

import time
import unittest
from urllib.parse import urlencode

from fixture import Fixture
from harness import Stack

stack = None
fixture = Fixture()
CHECKSUMMED = "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE"


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)


def tearDownModule():
    stack.stop()


def account(**params):
    return stack.get("/v1/account?" + urlencode(params))


def recorded(address):
    return stack.sql("SELECT c.slug, a.deposit_address, r.slug, a.recipient_address "
                     "FROM deposit_accounts a JOIN chains c ON c.id = a.deposit_chain "
                     "JOIN chains r ON r.id = a.recipient_chain "
                     f"WHERE a.deposit_address = '{address}'")


class Account(unittest.TestCase):
    def test_answer_echoes_the_request_and_records_the_mapping_once(self):
        lower = CHECKSUMMED.lower()  # any case is fine on a SideBase recipient chain
        first = account(recipient_address=lower, recipient_blockchain="unitiot",
                        deposit_blockchain="unitcore")
        self.assertEqual(first.status, 200, first)
        body = first.json()
        self.assertEqual(list(body), ["recipient_address", "recipient_blockchain",
                                      "deposit_blockchain", "deposit_address"])
        self.assertEqual(body["recipient_address"], lower)
        self.assertEqual((body["recipient_blockchain"], body["deposit_blockchain"]),
                         ("unitiot", "unitcore"))
        deposit = body["deposit_address"]
        self.assertRegex(deposit, r"^0x[0-9a-fA-F]{40}$")
        self.assertEqual(first.headers["Cache-Control"], "public, max-age=86400, immutable")
        again = account(recipient_address=CHECKSUMMED, recipient_blockchain="unitiot",
                        deposit_blockchain="unitcore")
        self.assertEqual(again.json()["deposit_address"], deposit)
        self.assertEqual(recorded(deposit), [["unitcore", deposit, "unitiot", CHECKSUMMED]])

    def test_address_depends_on_direction_and_recipient(self):
        a = account(recipient_address=CHECKSUMMED, recipient_blockchain="unitiot",
                    deposit_blockchain="unitcore").json()["deposit_address"]
        b = account(recipient_address=CHECKSUMMED, recipient_blockchain="unitcore",
                    deposit_blockchain="unitiot").json()["deposit_address"]
        c = account(recipient_address="0x" + "11" * 20, recipient_blockchain="unitiot",
                    deposit_blockchain="unitcore").json()["deposit_address"]
        self.assertEqual(len({a, b, c}), 3)

    def test_main_chain_recipient_must_be_checksummed(self):
        for wrong in (CHECKSUMMED.lower(), "0x52D9E4CCC9C769F131B6EF0C3729E5D0CD52DEFE",
                      CHECKSUMMED[:-1] + "e"):
            r = account(recipient_address=wrong, recipient_blockchain="unitcore",
                        deposit_blockchain="unitiot")
            self.assertEqual(r.status, 400, wrong)
            self.assertEqual(r.json()["error"], {
                "code": "invalid_parameter", "param": "recipient_address",
                "message": "recipient_address must be in checksum form on unitcore: "
                           + CHECKSUMMED,
                "request_id": r.headers["X-Request-Id"]})
        ok = account(recipient_address=CHECKSUMMED, recipient_blockchain="unitcore",
                     deposit_blockchain="unitiot")
        self.assertEqual(ok.status, 200)

    def test_invalid_requests(self):
        good = {"recipient_address": CHECKSUMMED, "recipient_blockchain": "unitiot",
                "deposit_blockchain": "unitcore"}
        cases = [
            ({k: v for k, v in good.items() if k != "recipient_address"}, "missing_parameter",
             "recipient_address"),
            ({**good, "deposit_blockchain": ""}, "missing_parameter", "deposit_blockchain"),
            ({**good, "recipient_blockchain": "ethereum"}, "invalid_parameter",
             "recipient_blockchain"),
            ({**good, "deposit_blockchain": "unitcoretestnet"}, "invalid_parameter",
             "deposit_blockchain"),
            ({**good, "deposit_blockchain": "unitiot"}, "invalid_parameter", "deposit_blockchain"),
            ({**good, "recipient_address": CHECKSUMMED[:-1]}, "invalid_parameter",
             "recipient_address"),
            ({**good, "recipient_address": CHECKSUMMED[2:]}, "invalid_parameter",
             "recipient_address"),
        ]
        for params, code, param in cases:
            r = account(**params)
            self.assertEqual(r.status, 400, params)
            self.assertEqual((r.json()["error"]["code"], r.json()["error"]["param"]),
                             (code, param), params)

    def test_unrecordable_address_is_a_503_without_the_address(self):
        recipient = "0x" + "22" * 20
        # The primary refuses writes (read_only, as after a demotion) but still answers reads.
        stack.sql("SET GLOBAL read_only = 1")
        try:
            r = account(recipient_address=recipient, recipient_blockchain="unitiot",
                        deposit_blockchain="unitcore")
        finally:
            stack.sql("SET GLOBAL read_only = 0")
        self.assertEqual(r.status, 503)
        self.assertEqual(r.json()["error"]["code"], "unavailable")
        self.assertNotIn(b"deposit_address", r.body)
        ok = account(recipient_address=recipient, recipient_blockchain="unitiot",
                     deposit_blockchain="unitcore")
        self.assertEqual(ok.status, 200)
        self.assertEqual(len(recorded(ok.json()["deposit_address"])), 1)

    def test_database_down_is_a_503_without_the_address(self):
        stack.stop_mariadb()
        try:
            r = account(recipient_address="0x" + "33" * 20, recipient_blockchain="unitiot",
                        deposit_blockchain="unitcore")
        finally:
            stack.start_mariadb()
            restarted_ms = time.time() * 1000
        self.assertEqual(r.status, 503)
        self.assertEqual(r.headers["Retry-After"], "1")
        # As a client following Retry-After would: the service answers again, unrestarted, once
        # every process has reached the database again (each has reloaded its refreshed copies).
        stack.wait_refreshed(after_unix_ms=restarted_ms)
        self.assertEqual(stack.get("/v1/networks").status, 200)
        self.assertEqual(account(recipient_address="0x" + "34" * 20,
                                 recipient_blockchain="unitiot",
                                 deposit_blockchain="unitcore").status, 200)
        self.assertEqual(r.json()["error"]["code"], "unavailable")
        self.assertNotIn(b"deposit_address", r.body)


if __name__ == "__main__":
    unittest.main()
